import { spawn, type ChildProcess } from 'node:child_process';
import { requiresRedis } from '../support/mode.ts';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';
import { sharedServer, type TestServer } from '../support/server.ts';
import { createStation } from '../support/factories.ts';
import { FeedClient, realtimePath, STATION_START_ROWS, writeRow } from '../support/feed.ts';

// `waveline gateway` as operators run it: separate processes, SIGTERM to stop.

const MAIN = fileURLToPath(new URL('../../src/main.ts', import.meta.url));

interface GatewayProcess {
  child: ChildProcess;
  url: string;
}

async function spawnGateway(): Promise<GatewayProcess> {
  const child = spawn(process.execPath, [MAIN, 'gateway'], {
    env: { ...process.env, PORT: '0', LOG_LEVEL: 'info', NODE_ENV: 'production' },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  // Every log line is read, for as long as the child runs: a full stdout pipe would block it.
  const lines = createInterface({ input: child.stdout! });
  const listening = new Promise<number>((resolve, reject) => {
    lines.on('line', (line) => {
      if (!line.startsWith('{')) return;
      const entry = JSON.parse(line) as { msg?: string; port?: number };
      if (entry.msg === 'gateway listening' && entry.port) resolve(entry.port);
    });
    child.once('exit', (code) => reject(new Error(`gateway process exited (${code}) before listening`)));
  });
  return { child, url: `ws://127.0.0.1:${await listening}` };
}

describe('realtime feed: gateway processes', () => {
  let server: TestServer;
  const children: ChildProcess[] = [];
  before(async () => {
    server = await sharedServer();
  });
  after(() => {
    for (const child of children) if (child.exitCode === null) child.kill('SIGKILL');
  });

  it('two gateway processes on different ports both deliver every event; SIGTERM closes every socket with 1012 and exits within 25 s', async function () {
    requiresRedis(this, 'separate gateway processes share the feed only through Redis');
    this.timeout(60_000);
    const [one, two] = await Promise.all([spawnGateway(), spawnGateway()]);
    children.push(one.child, two.child);
    expect(one.url).to.not.equal(two.url);
    const station = await createStation(server.url);
    // The state: the station's schedule, on-air and now-playing rows (there from its creation).
    const start = STATION_START_ROWS.length;
    const a = await FeedClient.ready(one.url, realtimePath(station.id), start);
    const b = await FeedClient.ready(two.url, realtimePath(station.id), start);
    const ids = [randomUUID(), randomUUID()];
    for (const id of ids) await writeRow(server.svc, station.id, 'content', id, { id });
    await a.waitFrames(start + 2);
    await b.waitFrames(start + 2);
    expect(
      a
        .events()
        .slice(start)
        .map((f) => f.data.payload.entry),
    ).to.deep.equal(ids);
    expect(b.frames).to.deep.equal(a.frames);

    const started = Date.now();
    const exited = once(one.child, 'exit');
    one.child.kill('SIGTERM');
    expect((await a.closed).code).to.equal(1012);
    const [exitCode] = await exited;
    expect(exitCode).to.equal(0);
    expect(Date.now() - started).to.be.lessThan(25_000);
    // the other node carries on
    await writeRow(server.svc, station.id, 'now-playing', 'current', { track: 'after' });
    await b.waitFrames(start + 3);
    b.close();
    two.child.kill('SIGTERM');
    await once(two.child, 'exit');
  });
});
