import { existsSync } from 'node:fs';
import puppeteer, { type Browser, type Page } from 'puppeteer-core';

// Headless Chromium from Debian's `chromium` package, driven by puppeteer-core (which never downloads a
// browser). .ci/run installs the package when it is missing; CHROMIUM_PATH points elsewhere.

export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

export async function launchBrowser(args: string[] = []): Promise<Browser> {
  if (!existsSync(CHROMIUM)) throw new Error(`No Chromium at ${CHROMIUM}: apt-get install -y chromium (or set CHROMIUM_PATH)`);
  return puppeteer.launch({
    executablePath: CHROMIUM,
    headless: true,
    // --no-sandbox: CI runs as root, where Chromium's sandbox refuses to start.
    args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage', '--no-first-run', '--no-default-browser-check', ...args],
  });
}

export interface ConsoleEntry {
  type: string;
  text: string;
  at: number;
  /** The resource a browser-logged message is about (a failed request), when it names one. */
  url?: string;
}

/** Every console message and uncaught page error, with the time it arrived. */
export function recordConsole(page: Page): ConsoleEntry[] {
  const entries: ConsoleEntry[] = [];
  page.on('console', (message) =>
    entries.push({ type: message.type(), text: message.text(), at: Date.now(), url: message.location()?.url }),
  );
  page.on('pageerror', (error) => entries.push({ type: 'pageerror', text: String(error), at: Date.now() }));
  return entries;
}

/** Polls a value computed in the page until `accept` says yes, or fails with the last value at the deadline. */
export async function pageEventually<T>(
  page: Page,
  read: () => T,
  accept: (value: T) => boolean,
  timeoutMs = 5000,
  what = 'page state',
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: T | undefined;
  for (;;) {
    last = (await page.evaluate(read)) as T;
    if (accept(last)) return last;
    if (Date.now() > deadline) throw new Error(`${what}: still ${JSON.stringify(last)} after ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
