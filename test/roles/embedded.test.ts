import { expect } from 'chai';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ADMIN_TOKEN } from '../support/env.ts';
import { eventually } from '../support/factories.ts';
import { freePort } from '../support/ports.ts';
import { startProcess, type RoleProcess } from '../support/processes.ts';

// The embedded default (docs/embedded.md#when-the-embedded-default-applies) as a user meets it: processes
// started from the CLI with DATABASE_URL and REDIS_URL unset, data in a directory of the test's own.

type Proc = RoleProcess;

/** Processes of the running test, killed after it whatever happened. */
const started: Proc[] = [];

function start(args: string[], env: Record<string, string>): Proc {
  const proc = startProcess(args, { DATABASE_URL: '', REDIS_URL: '', WAVELINE_DEMO: '0', ...env });
  started.push(proc);
  return proc;
}

async function startDev(dataDir: string): Promise<{ proc: Proc; url: string }> {
  const [port, gatewayPort] = [await freePort(), await freePort()];
  const proc = start(['dev'], { WAVELINE_DATA_DIR: dataDir, PORT: String(port), GATEWAY_PORT: String(gatewayPort) });
  const url = `http://127.0.0.1:${port}`;
  await eventually(
    async () =>
      (await fetch(`${url}/healthz`).catch(() => null))?.ok ||
      (proc.child.exitCode !== null ? Promise.reject(new Error(proc.output())) : null),
    { timeoutMs: 30_000, intervalMs: 100 },
  );
  return { proc, url };
}

const admin = (url: string, method: string, path: string, body?: unknown) =>
  fetch(`${url}/admin/v1${path}`, {
    method,
    headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });

/** One line on stderr, no stack trace. */
function oneLine(output: string): string {
  const lines = output.split('\n').filter((l) => l.trim() && !l.startsWith('npm warn'));
  expect(lines, output).to.have.length(1);
  expect(output).not.to.match(/\n\s+at /);
  return lines[0];
}

describe('embedded default: processes', function () {
  this.timeout(120_000);
  let dataDir: string;
  beforeEach(() => {
    dataDir = mkdtempSync(join(tmpdir(), 'waveline-embedded-'));
  });
  afterEach(async () => {
    for (const proc of started.splice(0)) {
      if (proc.child.exitCode === null && proc.child.signalCode === null) proc.child.kill('SIGKILL');
      await proc.exited;
    }
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('`waveline dev` with nothing configured runs on PGlite in <WAVELINE_DATA_DIR>/db and in-process adapters; data survives a clean stop and a SIGKILL', async () => {
    let { proc, url } = await startDev(dataDir);
    await eventually(() => proc.output().includes('waveline dev is up') || null, { timeoutMs: 10_000 });
    expect(proc.output()).to.include('"database":"embedded').and.include('"redis":"in-process"');
    expect(existsSync(join(dataDir, 'db', 'PG_VERSION'))).to.equal(true);
    const created = await admin(url, 'POST', '/stations', { slug: 'kept-clean', name: 'Kept', timezone: 'Europe/Berlin' });
    expect(created.status).to.equal(201);
    const clean = ((await created.json()) as { id: string }).id;
    proc.child.kill('SIGTERM');
    expect(await proc.exited).to.equal(0);
    expect(existsSync(join(dataDir, 'db.lock')), 'a clean stop releases the lock').to.equal(false);

    ({ proc, url } = await startDev(dataDir));
    expect((await admin(url, 'GET', `/stations/${clean}`)).status, 'after a clean stop').to.equal(200);
    const killedAnswer = await admin(url, 'POST', '/stations', { slug: 'kept-killed', name: 'Killed', timezone: 'Europe/Berlin' });
    expect(killedAnswer.status).to.equal(201);
    const killed = ((await killedAnswer.json()) as { id: string }).id;
    proc.child.kill('SIGKILL');
    await proc.exited;

    ({ proc, url } = await startDev(dataDir));
    expect((await admin(url, 'GET', `/stations/${clean}`)).status).to.equal(200);
    expect((await admin(url, 'GET', `/stations/${killed}`)).status, 'a committed write survives SIGKILL').to.equal(200);
    proc.child.kill('SIGTERM');
    expect(await proc.exited).to.equal(0);
  });

  it('a second instance on the same data directory refuses with a clear message; the first keeps serving its data', async () => {
    const { proc, url } = await startDev(dataDir);
    const created = await admin(url, 'POST', '/stations', { slug: 'first', name: 'First', timezone: 'UTC' });
    expect(created.status).to.equal(201);
    const first = ((await created.json()) as { id: string }).id;
    const second = start(['dev'], {
      WAVELINE_DATA_DIR: dataDir,
      PORT: String(await freePort()),
      GATEWAY_PORT: String(await freePort()),
      LOG_LEVEL: 'silent',
    });
    expect(await second.exited).to.equal(69);
    expect(oneLine(second.output())).to.match(/embedded database .* is in use by another Waveline process \(pid \d+\)/);
    expect((await admin(url, 'GET', `/stations/${first}`)).status).to.equal(200);
    proc.child.kill('SIGTERM');
    expect(await proc.exited).to.equal(0);
  });

  for (const role of ['web', 'worker', 'gateway']) {
    it(`\`waveline ${role}\` refuses to start without REDIS_URL, and without a Postgres DATABASE_URL, naming the variable`, async () => {
      const noRedis = start([role], { DATABASE_URL: 'postgres://postgres@127.0.0.1:5432/whatever' });
      expect(await noRedis.exited).to.equal(78);
      expect(oneLine(noRedis.output())).to.match(/^waveline: REDIS_URL is not set/);
      const noPostgres = start([role], { REDIS_URL: 'redis://127.0.0.1:6379/0' });
      expect(await noPostgres.exited).to.equal(78);
      expect(oneLine(noPostgres.output())).to.match(/^waveline: DATABASE_URL is not set/);
    });
  }

  describe('a configured service that does not answer stops the process with one line naming the URL (password masked)', () => {
    let silent: Server;
    let silentPort: number;
    const sockets = new Set<Socket>();
    before(async () => {
      // Accepts connections and never says a word: a firewall or a hung server.
      silent = createServer((socket) => sockets.add(socket));
      await new Promise<void>((ok) => silent.listen(0, '127.0.0.1', ok));
      silentPort = (silent.address() as { port: number }).port;
    });
    after(() => {
      for (const socket of sockets) socket.destroy();
      return new Promise<void>((ok) => silent.close(() => ok()));
    });

    it('Postgres refusing connections', async () => {
      const proc = start(['dev'], {
        DATABASE_URL: `postgres://waveline:s3cret-pw@127.0.0.1:${await freePort()}/waveline`,
        WAVELINE_DATA_DIR: dataDir,
      });
      expect(await proc.exited).to.equal(69);
      const line = oneLine(proc.output());
      expect(line).to.match(
        /^waveline: cannot reach Postgres at postgres:\/\/waveline:\*\*\*@127\.0\.0\.1:\d+\/waveline: .*ECONNREFUSED.*DATABASE_URL/,
      );
      expect(line).not.to.include('s3cret-pw');
    });

    it('Postgres not answering within 5 s', async () => {
      const startedAt = Date.now();
      const proc = start(['dev'], {
        DATABASE_URL: `postgres://waveline:s3cret-pw@127.0.0.1:${silentPort}/waveline`,
        WAVELINE_DATA_DIR: dataDir,
      });
      expect(await proc.exited).to.equal(69);
      expect(Date.now() - startedAt).to.be.below(15_000);
      expect(oneLine(proc.output())).to.match(
        /cannot reach Postgres at postgres:\/\/waveline:\*\*\*@127\.0\.0\.1:\d+\/waveline: it did not answer within 5 s/,
      );
    });

    it('Redis refusing connections', async () => {
      const proc = start(['dev'], { REDIS_URL: `redis://:s3cret-pw@127.0.0.1:${await freePort()}/0`, WAVELINE_DATA_DIR: dataDir });
      expect(await proc.exited).to.equal(69);
      const line = oneLine(proc.output());
      expect(line).to.match(/^waveline: cannot reach Redis at redis:\/\/:\*\*\*@127\.0\.0\.1:\d+\/0: .*ECONNREFUSED.*REDIS_URL/);
      expect(line).not.to.include('s3cret-pw');
    });

    it('Redis not answering within 5 s', async () => {
      const startedAt = Date.now();
      const proc = start(['dev'], { REDIS_URL: `redis://127.0.0.1:${silentPort}/0`, WAVELINE_DATA_DIR: dataDir });
      expect(await proc.exited).to.equal(69);
      expect(Date.now() - startedAt).to.be.below(15_000);
      expect(oneLine(proc.output())).to.match(/cannot reach Redis at redis:\/\/127\.0\.0\.1:\d+\/0: it did not answer within 5 s/);
    });
  });
});
