import type { AddressInfo } from 'node:net';
import { loadConfig, type Config } from '../../src/config.ts';
import { ManualClock, type Clock } from '../../src/lib/clock.ts';
import { createLogger } from '../../src/lib/logger.ts';
import { createWebServices } from '../../src/roles/services.ts';
import type { WebServices } from '../../src/services.ts';
import { startWeb } from '../../src/roles/web.ts';
import { startWorkers } from '../../workers/index.ts';

export interface TestServer {
  url: string;
  svc: WebServices;
  close(): Promise<void>;
}

const running = new Set<TestServer>();
let shared: Promise<TestServer> | null = null;

/** A web app on an ephemeral port, talking to the test database and Redis. */
export async function startTestServer(options: { clock?: Clock; env?: Record<string, string> } = {}): Promise<TestServer> {
  const config: Readonly<Config> = loadConfig({ ...process.env, PORT: '0', ...options.env });
  const logger = createLogger(config, 'test');
  const svc = await createWebServices(config, logger, { clock: options.clock });
  const web = await startWeb(svc, 0, logger);
  const { port } = web.server.address() as AddressInfo;
  const server: TestServer = {
    url: `http://127.0.0.1:${port}`,
    svc,
    async close() {
      running.delete(server);
      // A short drain: a test that left a half-sent request (hostile input, slow bodies) does not hold the
      // suite for the production grace; the drain itself is tested on a real process (test/roles/drain.test.ts).
      await web.close(500);
      await svc.close();
    },
  };
  running.add(server);
  return server;
}

/**
 * The set-up most suites share: a web app on its own ManualClock, started before the suite and closed
 * after it; with `reset`, the clock is set back to `start` before each test; with `workers`, the job
 * workers run on the app's services from the first hook on and are closed before it. Call it inside
 * `describe` where the suite's `before` would go (later hooks may use the server). The returned `server`
 * stands for the running one from the first hook on.
 */
export function useClockedServer(
  start: Date | string | number,
  options: { reset?: boolean; env?: Record<string, string>; workers?: boolean } = {},
): { clock: ManualClock; server: TestServer } {
  const clock = new ManualClock(start);
  let started: TestServer | undefined;
  let workers: Workers | undefined;
  before(async () => {
    started = await startTestServer({ clock, env: options.env });
    if (options.workers) workers = await startWorkers(started.svc);
  });
  after(async () => {
    await workers?.close();
    workers = undefined;
    await started?.close();
    started = undefined;
  });
  if (options.reset) beforeEach(() => clock.set(start));
  return { clock, server: standIn(() => started) };
}

/**
 * The shared server with the job workers running for this suite only: started before it and closed
 * after it (the server itself stays up for the suites that follow). Call it inside `describe` where the
 * suite's `before` would go.
 */
export function useSharedServerWithWorkers(): { server: TestServer } {
  let started: TestServer | undefined;
  let workers: Workers | undefined;
  before(async () => {
    started = await sharedServer();
    workers = await startWorkers(started.svc);
  });
  after(async () => {
    await workers?.close();
    workers = undefined;
  });
  return { server: standIn(() => started) };
}

type Workers = Awaited<ReturnType<typeof startWorkers>>;

/** A TestServer to hand out at `describe` time, standing for the one a `before` hook starts later. */
function standIn(running: () => TestServer | undefined): TestServer {
  const current = (): TestServer => {
    const server = running();
    if (!server) throw new Error('the test server starts in before(): use it from a hook or a test');
    return server;
  };
  return {
    get url() {
      return current().url;
    },
    get svc() {
      return current().svc;
    },
    close: () => current().close(),
  };
}

/** One server shared by the tests that need no special clock or configuration. */
export function sharedServer(): Promise<TestServer> {
  shared ??= startTestServer();
  return shared;
}

export async function stopAllServers(): Promise<void> {
  for (const server of [...running]) await server.close();
  shared = null;
}

/**
 * Database statements a server runs while `fn` runs (knex's query event), leaving out the gates' own
 * caches (station and credential look-ups and last-used stamps expire on their own clocks).
 */
export async function queriesDuring(server: TestServer, fn: () => Promise<unknown>): Promise<number> {
  let count = 0;
  const count1 = (query: { sql?: string }) => {
    if (!/\b(from|update)\s+"?(stations|credentials)"?/i.test(query.sql ?? '')) count++;
  };
  server.svc.db.on('query', count1);
  try {
    await fn();
  } finally {
    server.svc.db.removeListener('query', count1);
  }
  return count;
}
