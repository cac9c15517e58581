import { readFileSync, writeFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, dirname, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { expect } from 'chai';
import { admin } from '../../support/http.ts';
import { createStation, eventually } from '../../support/factories.ts';
import { startReceiver } from '../../support/receiver.ts';
import { sharedServer } from '../../support/server.ts';
import { startWorkers } from '../../../workers/index.ts';
import { createHook } from './helpers.ts';

// docs/webhooks.md promises receivers a verification snippet that works: run exactly that code block
// (extracted from the markdown) against a real delivery.

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');

describe('docs/webhooks.md signature snippet', () => {
  it('verifies a real delivery, and refuses a tampered body, another secret and a stale timestamp', async () => {
    const markdown = readFileSync(join(root, 'docs/webhooks.md'), 'utf8');
    const section = markdown.slice(markdown.indexOf('## Verifying a signature'));
    const snippet = /```js\n([\s\S]*?)```/.exec(section)?.[1];
    expect(snippet, 'a ```js block under "Verifying a signature"').to.be.a('string');
    const dir = mkdtempSync(join(tmpdir(), 'waveline-snippet-'));
    const server = await sharedServer();
    const workers = await startWorkers(server.svc);
    const receiver = await startReceiver();
    try {
      const file = join(dir, 'verify.mjs');
      writeFileSync(file, snippet as string);
      const { verifyWaveline } = (await import(pathToFileURL(file).href)) as {
        verifyWaveline: (s: string, h: Record<string, unknown>, b: string) => boolean;
      };
      const station = await createStation(server.url);
      const hook = await createHook(server.url, station.id, receiver.url);
      expect((await admin(server.url, 'POST', `/stations/${station.id}/webhooks/${hook.id}/test`)).status).to.equal(202);
      await eventually(() => receiver.received.length === 1);
      const [delivery] = receiver.received;
      expect(verifyWaveline(hook.secret, delivery.headers, delivery.body)).to.equal(true);
      expect(verifyWaveline(hook.secret, delivery.headers, delivery.body.replace('ping', 'pong'))).to.equal(false);
      const other = await createHook(server.url, station.id, 'https://example.org/other');
      expect(verifyWaveline(other.secret, delivery.headers, delivery.body)).to.equal(false);
      expect(
        verifyWaveline(
          hook.secret,
          { ...delivery.headers, 'webhook-timestamp': String(Number(delivery.headers['webhook-timestamp']) - 600) },
          delivery.body,
        ),
      ).to.equal(false);
    } finally {
      await receiver.close();
      await workers.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
