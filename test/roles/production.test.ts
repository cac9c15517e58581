import { expect } from 'chai';
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readFileSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { eventually } from '../support/factories.ts';
import { requiresRedis } from '../support/mode.ts';
import { freePort } from '../support/ports.ts';

// Deploys as the README says: a Heroku-style build installs without dev dependencies (so no
// node_modules/.bin/node) and puts the platform's Node 22 on PATH; every Procfile entry must then start.

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

describe('production install (npm ci --omit=dev) and the Procfile', function () {
  this.timeout(300_000);
  let app: string;
  let procfile: Map<string, string>;
  let env: NodeJS.ProcessEnv;

  before(function () {
    requiresRedis(this, 'web, worker and gateway run as separate processes only with Redis and Postgres servers');
    app = mkdtempSync(join(tmpdir(), 'waveline-prod-'));
    // What a build receives: the repository's files (tracked and new), none of the installed ones.
    const files = execFileSync('git', ['ls-files', '-co', '--exclude-standard'], { cwd: root, encoding: 'utf8' })
      .split('\n')
      .filter(Boolean);
    for (const file of files)
      if (!file.startsWith('test/') && !file.startsWith('bench/') && existsSync(join(root, file)))
        cpSync(join(root, file), join(app, file));
    // Node 22 from the dev dependency's binary plays the platform's Node; the machine's own node is not it.
    const node22 = dirname(realpathSync(join(root, 'node_modules/.bin/node')));
    env = { ...process.env, PATH: `${node22}:${process.env.PATH}`, NODE_ENV: 'production', LOG_LEVEL: 'info' };
    delete env.npm_config_nodedir;
    execFileSync('npm', ['ci', '--omit=dev', '--prefer-offline', '--no-audit', '--no-fund'], {
      cwd: app,
      env,
      stdio: 'ignore',
      timeout: 240_000,
    });
    procfile = new Map(
      readFileSync(join(app, 'Procfile'), 'utf8')
        .split('\n')
        .filter((l) => l.includes(':'))
        .map((l) => [l.slice(0, l.indexOf(':')), l.slice(l.indexOf(':') + 1).trim()]),
    );
  });
  after(() => app && rmSync(app, { recursive: true, force: true }));

  function start(
    role: string,
    extra: Record<string, string>,
  ): { child: ChildProcess; output: () => string; exited: Promise<number | null> } {
    // As a platform runs a Procfile line: through a shell, whose `exec` hands the process (and SIGTERM) to Node.
    const child = spawn('sh', ['-c', procfile.get(role)!], {
      cwd: app,
      env: { ...env, WAVELINE_SECRET: 'production-secret-0123456789', ...extra },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout!.on('data', (d) => (out += d));
    child.stderr!.on('data', (d) => (out += d));
    const exited = new Promise<number | null>((ok) => child.on('exit', (code) => ok(code)));
    return { child, output: () => out, exited };
  }

  it('installs without dev dependencies: no node_modules/.bin/node, and the native gateway binary exists for the Node versions in `engines`', () => {
    expect(existsSync(join(app, 'node_modules/.bin/node'))).to.equal(false);
    const abi = execFileSync('node', ['-p', 'process.versions.modules'], { env, encoding: 'utf8' }).trim();
    expect(existsSync(join(app, `node_modules/uWebSockets.js/dist/bin/uws_${process.platform}_${process.arch}_${abi}.node`))).to.equal(
      true,
    );
    expect(JSON.parse(readFileSync(join(app, 'package.json'), 'utf8')).engines.node).to.equal('>=22.18.0 <23');
  });

  it('release migrates and exits 0', async () => {
    const release = start('release', {});
    expect(await release.exited, release.output()).to.equal(0);
  });

  for (const role of ['web', 'gateway']) {
    it(`${role} answers /healthz on PORT and exits 0 on SIGTERM`, async () => {
      const port = await freePort();
      const proc = start(role, { PORT: String(port) });
      try {
        await eventually(async () => (await fetch(`http://127.0.0.1:${port}/healthz`).catch(() => null))?.ok === true || null, {
          timeoutMs: 30_000,
          intervalMs: 100,
        });
      } catch (err) {
        proc.child.kill('SIGKILL');
        throw new Error(`${role} did not answer: ${proc.output()}`, { cause: err });
      }
      proc.child.kill('SIGTERM');
      expect(await proc.exited, proc.output()).to.equal(0);
    });
  }

  it('worker logs that it is ready and exits 0 on SIGTERM', async () => {
    const worker = start('worker', {});
    await eventually(() => worker.output().includes('workers ready') || null, { timeoutMs: 30_000, intervalMs: 100 }).catch(
      (err: unknown) => {
        worker.child.kill('SIGKILL');
        throw new Error(`worker not ready: ${worker.output()}`, { cause: err });
      },
    );
    worker.child.kill('SIGTERM');
    expect(await worker.exited, worker.output()).to.equal(0);
  });
});
