import { expect } from 'chai';
import { onRedisCluster, requiresRedis } from '../support/mode.ts';
import { spawn, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { eventually } from '../support/factories.ts';
import { freePort } from '../support/ports.ts';
import { repoRoot as root, startProcess, type RoleProcess } from '../support/processes.ts';

const start = (role: string, env: Record<string, string>): RoleProcess => startProcess([role], env);

async function stopWithin(proc: RoleProcess, ms: number): Promise<number | null> {
  const startedAt = Date.now();
  proc.child.kill('SIGTERM');
  const code = await proc.exited;
  expect(Date.now() - startedAt).to.be.lessThan(ms);
  return code;
}

/** On a Redis Cluster (TEST_REDIS_CLUSTER_URLS, three masters) /readyz says what it sees of it. */
const onCluster = onRedisCluster() ? { redisCluster: { state: 'ok', masters: 3, mastersReachable: 3 } } : {};

describe('process roles', function () {
  this.timeout(40_000);

  it('web answers /healthz and /readyz, then drains and exits 0 on SIGTERM', async function () {
    requiresRedis(this, 'waveline web runs as a separate process only with Redis and a Postgres server');
    const port = await freePort();
    const web = start('web', { PORT: String(port) });
    await eventually(async () => (await fetch(`http://127.0.0.1:${port}/healthz`)).ok, { timeoutMs: 15_000, intervalMs: 100 });
    const ready = await fetch(`http://127.0.0.1:${port}/readyz`);
    expect(await ready.json()).to.deep.equal({ ok: true, postgres: true, redis: true, ...onCluster });
    expect(await stopWithin(web, 25_000)).to.equal(0);
    expect(web.output()).to.include('shutting down');
  });

  it('gateway answers /healthz on PORT when run alone and exits 0 on SIGTERM', async function () {
    requiresRedis(this, 'waveline gateway runs as a separate process only with Redis and a Postgres server');
    const port = await freePort();
    const gateway = start('gateway', { PORT: String(port) });
    await eventually(async () => (await fetch(`http://127.0.0.1:${port}/healthz`)).ok, { timeoutMs: 15_000, intervalMs: 100 });
    expect(await stopWithin(gateway, 25_000)).to.equal(0);
  });

  it('worker starts its queues, answers /healthz, /readyz and /metrics on WORKER_PORT, and exits 0 on SIGTERM', async function () {
    requiresRedis(this, 'waveline worker runs as a separate process only with Redis and a Postgres server');
    const port = await freePort();
    const worker = start('worker', { WORKER_PORT: String(port) });
    await eventually(() => worker.output().includes('workers ready'), { timeoutMs: 15_000, intervalMs: 100 });
    const base = `http://127.0.0.1:${port}`;
    expect(await (await eventually(() => fetch(`${base}/healthz`), { timeoutMs: 15_000, intervalMs: 100 })).json()).to.deep.equal({
      ok: true,
    });
    expect(await (await fetch(`${base}/readyz`)).json()).to.deep.equal({
      ok: true,
      postgres: true,
      redis: true,
      workers: true,
      ...onCluster,
    });
    const metrics = await (await fetch(`${base}/metrics`)).text();
    expect(metrics).to.match(/^waveline_queue_jobs\{queue="ingest",state="waiting"\} \d+$/m);
    expect(metrics).to.include('process_cpu_seconds_total');
    expect(await stopWithin(worker, 25_000)).to.equal(0);
  });

  it('refuses a bad configuration with a message naming the variable', async () => {
    const web = start('web', { PORT: 'eighty' });
    expect(await web.exited).to.equal(78);
    expect(web.output()).to.include('PORT must be a whole number');
    const bad = start('web', { REDIS_URL: 'http://nope' });
    expect(await bad.exited).to.equal(78);
    expect(bad.output()).to.include('REDIS_URL');
  });

  it('prints usage for an unknown command', async () => {
    const proc = start('fly', {});
    expect(await proc.exited).to.equal(64);
    expect(proc.output()).to.include('usage: waveline');
  });

  it('`npm start` hands SIGTERM to the Node process, which shuts all three roles down', async () => {
    const port = await freePort();
    const gatewayPort = await freePort();
    const npm = spawn('npm', ['start', '--silent'], {
      cwd: root,
      env: { ...process.env, LOG_LEVEL: 'info', PORT: String(port), GATEWAY_PORT: String(gatewayPort), WAVELINE_DEMO: '0' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    npm.stdout!.on('data', (d) => (out += d));
    npm.stderr!.on('data', (d) => (out += d));
    const exited = new Promise<number | null>((ok) => npm.on('exit', (code) => ok(code)));
    await eventually(async () => (await fetch(`http://127.0.0.1:${port}/healthz`)).ok, { timeoutMs: 20_000, intervalMs: 100 });
    await eventually(async () => (await fetch(`http://127.0.0.1:${gatewayPort}/healthz`)).ok, { timeoutMs: 10_000, intervalMs: 100 });
    await eventually(() => out.includes('waveline dev is up'), { timeoutMs: 10_000, intervalMs: 50 });
    expect(out, 'the start-up banner links the API reference and the widget demo').to.match(
      /waveline dev is up: API reference http\S+\/docs · widget demo http\S+\/demo/,
    );
    npm.kill('SIGTERM');
    expect(await exited).to.equal(0);
    expect(out).to.include('shutting down');
    // Nothing is left listening.
    for (const p of [port, gatewayPort]) {
      let refused = false;
      await fetch(`http://127.0.0.1:${p}/healthz`).catch(() => (refused = true));
      expect(refused, `port ${p}`).to.equal(true);
    }
  });

  it('the Procfile starts Node directly (not through npm, whose shell would not forward signals)', () => {
    const lines = readFileSync(resolve(root, 'Procfile'), 'utf8')
      .split('\n')
      .filter((l) => l.trim() && !l.startsWith('#'));
    expect(lines.map((l) => l.split(':')[0])).to.include.members(['web', 'worker', 'gateway']);
    for (const line of lines) expect(line.slice(line.indexOf(':') + 1).trim(), line).to.match(/^exec node src\/main\.ts \w+$/);
  });

  it("bin/waveline runs with the project's Node 22 (the dev dependency), whatever `node` is first on PATH", () => {
    // A PATH without node_modules/.bin: the machine's node (20 here, or none) cannot run the TypeScript
    // sources, so the usage below is printed only when the script found the project's Node.
    const run = spawnSync(resolve(root, 'bin/waveline'), ['--help'], { env: { ...process.env, PATH: '/usr/bin:/bin' }, encoding: 'utf8' });
    expect(run.status, run.stderr).to.equal(0);
    expect(run.stderr).to.include('usage: waveline <command>');
  });

  it('the gateway role never imports Koa or knex', () => {
    const seen = new Set<string>();
    const packages = new Set<string>();
    const visit = (file: string) => {
      if (seen.has(file)) return;
      seen.add(file);
      const source = readFileSync(file, 'utf8');
      for (const match of source.matchAll(
        /(?:import|export)\s[^'"]*?from\s+['"]([^'"]+)['"]|import\(\s*['"]([^'"]+)['"]\s*\)|^import\s+['"]([^'"]+)['"]/gm,
      )) {
        const spec = match[1] ?? match[2] ?? match[3];
        if (/^import type|^export type/.test(match[0])) continue;
        if (spec.startsWith('.')) visit(resolve(dirname(file), spec));
        else packages.add(spec);
      }
    };
    visit(resolve(root, 'src/roles/gateway.ts'));
    expect([...packages].filter((p) => /^(koa|@koa\/|knex|koa-body)/.test(p))).to.deep.equal([]);
  });
});

describe('waveline admin (CLI)', function () {
  this.timeout(40_000);
  it('runs an admin call in-process and prints the JSON answer', async () => {
    const slug = `cli-${Date.now().toString(36)}`;
    const run = spawn(
      process.execPath,
      ['src/main.ts', 'admin', 'POST', '/stations', JSON.stringify({ slug, name: 'CLI FM', timezone: 'UTC' })],
      { cwd: root, env: process.env, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let out = '';
    run.stdout!.on('data', (d) => (out += d));
    const code = await new Promise<number | null>((ok) => run.on('exit', ok));
    expect(code).to.equal(0);
    expect(JSON.parse(out)).to.include({ slug, name: 'CLI FM', timezone: 'UTC' });
  });

  it('reaches the webhook and play log routes: creates a webhook (secret shown once), lists it, and prints a CSV play log', async () => {
    const cli = async (...args: string[]) => {
      const run = spawn(process.execPath, ['src/main.ts', 'admin', ...args], {
        cwd: root,
        env: process.env,
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let out = '';
      run.stdout!.on('data', (d) => (out += d));
      const code = await new Promise<number | null>((ok) => run.on('exit', ok));
      return { code, out };
    };
    const slug = `cli-wh-${Date.now().toString(36)}`;
    const station = JSON.parse((await cli('POST', '/stations', JSON.stringify({ slug, name: 'CLI FM', timezone: 'UTC' }))).out);
    const created = await cli(
      'POST',
      `/stations/${station.id}/webhooks`,
      JSON.stringify({ url: 'https://example.org/hook', events: ['content.published'] }),
    );
    expect(created.code).to.equal(0);
    expect(JSON.parse(created.out).secret).to.match(/^whsec_/);
    const listed = JSON.parse((await cli('GET', `/stations/${station.id}/webhooks`)).out);
    expect(listed.webhooks).to.have.length(1);
    expect(listed.webhooks[0]).not.to.have.property('secret');
    const csv = await cli('GET', `/stations/${station.id}/plays?from=2026-01-01T00:00:00Z&to=2026-01-02T00:00:00Z&format=csv`);
    expect(csv.code).to.equal(0);
    expect(csv.out.split('\r\n')[0]).to.equal(
      'playedAt,localTime,artist,title,album,durationSeconds,sourceTrackId,outcome,broadcastId,programTitle,rundownItemId,credentialLabel,isrc,endedAt,performances,performancesByStream,likes,dislikes',
    );
  });
});
