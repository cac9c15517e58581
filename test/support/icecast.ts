import { spawn, type ChildProcess } from 'node:child_process';
import { chmod, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { request, type ClientRequest, type IncomingMessage } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from './ports.ts';
import { repoRoot } from './processes.ts';

// A real Icecast (Debian's `icecast2`, installed by .ci/run) for the audience tests: its own
// configuration on a free port, logs in a temp dir, a source client streaming MP3 to a mount and real
// listener connections, so the poller reads a real server's `/status-json.xsl`.
// Icecast refuses to run as root: when the tests run as root (CI containers) the configuration makes it
// drop to nobody:nogroup after binding, and the temp dir is made writable for that user.

export const ICECAST_BIN = '/usr/bin/icecast2';
const SOURCE_PASSWORD = 'test-source-pw';

export interface Icecast {
  port: number;
  statusUrl: string;
  /** Starts a source client streaming MP3 to `mount` (e.g. `/live.mp3`); resolves once Icecast lists the mount. */
  source(mount: string): Promise<{ stop(): void }>;
  /** Opens a listener connection to `mount`, reading what it sends; resolves once the response started. */
  listen(mount: string): Promise<{ close(): void }>;
  /** The listener count Icecast reports for `mount` (null when the mount is not live). */
  listeners(mount: string): Promise<number | null>;
  stop(): Promise<void>;
}

function configXml(port: number, dir: string): string {
  const asRoot = process.getuid?.() === 0;
  return `<icecast>
  <location>test</location>
  <admin>test@localhost</admin>
  <limits>
    <clients>200</clients><sources>8</sources><queue-size>524288</queue-size>
    <client-timeout>30</client-timeout><header-timeout>15</header-timeout><source-timeout>10</source-timeout>
    <burst-size>65535</burst-size>
  </limits>
  <authentication>
    <source-password>${SOURCE_PASSWORD}</source-password>
    <admin-user>admin</admin-user><admin-password>${SOURCE_PASSWORD}</admin-password>
  </authentication>
  <hostname>127.0.0.1</hostname>
  <listen-socket><port>${port}</port><bind-address>127.0.0.1</bind-address></listen-socket>
  <fileserve>1</fileserve>
  <paths>
    <basedir>/usr/share/icecast2</basedir>
    <logdir>${dir}</logdir>
    <webroot>/usr/share/icecast2/web</webroot>
    <adminroot>/usr/share/icecast2/admin</adminroot>
    <pidfile>${dir}/icecast.pid</pidfile>
  </paths>
  <logging><accesslog>access.log</accesslog><errorlog>error.log</errorlog><loglevel>2</loglevel></logging>
  <security>
    <chroot>0</chroot>
    ${asRoot ? '<changeowner><user>nobody</user><group>nogroup</group></changeowner>' : ''}
  </security>
</icecast>
`;
}

async function getJson(url: string): Promise<unknown> {
  const res = await fetch(url, { signal: AbortSignal.timeout(2000) });
  if (!res.ok) throw new Error(`HTTP ${res.status}`);
  return res.json();
}

async function until<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 10_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const value = await probe();
      if (value !== undefined) return value;
    } catch (err) {
      last = err;
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}${last ? `: ${(last as Error).message}` : ''}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

export async function startIcecast(): Promise<Icecast> {
  const dir = await mkdtemp(join(tmpdir(), 'wl-icecast-'));
  await chmod(dir, 0o777);
  const port = await freePort();
  const configPath = join(dir, 'icecast.xml');
  await writeFile(configPath, configXml(port, dir));
  await chmod(configPath, 0o644);
  const child: ChildProcess = spawn(ICECAST_BIN, ['-c', configPath], { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout!.on('data', (d) => (output += d));
  child.stderr!.on('data', (d) => (output += d));
  const exited = new Promise<void>((ok) => child.once('exit', () => ok()));
  const statusUrl = `http://127.0.0.1:${port}/status-json.xsl`;
  try {
    await until('icecast to answer', async () => ((await getJson(statusUrl)) ? true : undefined));
  } catch (err) {
    child.kill('SIGKILL');
    const log = await readFile(join(dir, 'error.log'), 'utf8').catch(() => '');
    throw new Error(`${(err as Error).message}\n${output}\n${log}`);
  }
  const mp3 = await readFile(join(repoRoot, 'test/fixtures/audio/tone-cbr.mp3'));
  const open = new Set<{ destroy(): void }>();

  const listeners = async (mount: string): Promise<number | null> => {
    const doc = (await getJson(statusUrl)) as { icestats: { source?: unknown } };
    const raw = doc.icestats.source;
    const sources = (raw === undefined ? [] : Array.isArray(raw) ? raw : [raw]) as Array<{ listenurl: string; listeners: number }>;
    const entry = sources.find((s) => new URL(s.listenurl).pathname === mount);
    return entry ? entry.listeners : null;
  };

  return {
    port,
    statusUrl,
    listeners,
    async source(mount) {
      const req: ClientRequest = request({
        host: '127.0.0.1',
        port,
        method: 'PUT',
        path: mount,
        headers: {
          authorization: `Basic ${Buffer.from(`source:${SOURCE_PASSWORD}`).toString('base64')}`,
          'content-type': 'audio/mpeg',
          'ice-public': '0',
          'ice-name': 'Waveline test',
        },
      });
      req.on('error', () => undefined);
      open.add(req);
      // Roughly the file's bitrate (a few KiB every 100 ms), looping, so Icecast keeps the mount live.
      let offset = 0;
      const timer = setInterval(() => {
        const chunk = mp3.subarray(offset, offset + 2048);
        offset = offset + 2048 >= mp3.length ? 0 : offset + 2048;
        req.write(chunk);
      }, 100);
      req.write(mp3.subarray(0, 8192));
      await until(`mount ${mount} to be listed`, async () => ((await listeners(mount)) !== null ? true : undefined));
      return {
        stop() {
          clearInterval(timer);
          req.destroy();
          open.delete(req);
        },
      };
    },
    async listen(mount) {
      const res = await new Promise<IncomingMessage>((ok, fail) => {
        const req = request({ host: '127.0.0.1', port, path: mount }, ok);
        req.on('error', fail);
        req.end();
        open.add(req);
      });
      res.on('data', () => undefined);
      res.on('error', () => undefined);
      open.add(res);
      return {
        close() {
          res.destroy();
          open.delete(res);
        },
      };
    },
    async stop() {
      for (const o of open) o.destroy();
      child.kill('SIGTERM');
      await Promise.race([exited, new Promise((r) => setTimeout(r, 3000))]);
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await rm(dir, { recursive: true, force: true });
    },
  };
}
