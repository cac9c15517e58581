// npm run bench:station — station document throughput and p99, with a credential and with If-None-Match,
// beside a bare node:http server answering the same bytes in the same run, and beside a second web
// process with observability off (METRICS=0 REQUEST_LOG=0): the cost of metrics and request logs.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BENCH_ENV, freePort, load, measure, startBare, startRole, stopRole, waitUntilReady } from './support.ts';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const ADMIN = BENCH_ENV.WAVELINE_ADMIN_TOKEN;
const env = {
  ...BENCH_ENV,
  DATABASE_URL: process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/waveline_bench',
  REDIS_URL: process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379/14',
  // Observability on, as in production: metrics and one info line per request (to /dev/null here).
  LOG_LEVEL: 'info',
};
const OFF = { METRICS: '0', REQUEST_LOG: '0' };

async function adminCall(base: string, method: string, path: string, body: unknown): Promise<Record<string, string>> {
  const res = await fetch(`${base}/admin/v1${path}`, {
    method,
    headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${await res.text()}`);
  return (await res.json()) as Record<string, string>;
}

/** A station and a listener credential on the server at `base`; its document's URL, bytes and ETag. */
async function prepare(base: string): Promise<{ url: string; token: string; bytes: Buffer; etag: string }> {
  await waitUntilReady(base);
  const slug = `bench-${Date.now().toString(36)}`;
  const station = await adminCall(base, 'POST', '/stations', {
    slug,
    name: 'Bench FM',
    timezone: 'Europe/Berlin',
    profile: {
      tagline: 'Benchmarks all day',
      streamUrls: [{ label: 'MP3', url: 'https://stream.example/live.mp3', mime: 'audio/mpeg', bitrateKbps: 128 }],
    },
  });
  const { token } = await adminCall(base, 'POST', `/stations/${station.id}/credentials`, { scopes: ['listener:read'] });
  const url = `${base}/api/v1/stations/${slug}`;
  const first = await fetch(url, { headers: { authorization: `Bearer ${token}` } });
  return { url, token, bytes: Buffer.from(await first.arrayBuffer()), etag: first.headers.get('etag')! };
}

async function main() {
  const migrate = startRole('migrate', env);
  await new Promise((ok) => migrate.on('exit', ok));
  const port = await freePort();
  const web = startRole('web', { ...env, PORT: String(port) });
  const offPort = await freePort();
  const webOff = startRole('web', { ...env, ...OFF, PORT: String(offPort) });
  const base = `http://127.0.0.1:${port}`;
  // The embedded default beside it, in the same run: `waveline dev` on PGlite and in-process adapters.
  const dataDir = mkdtempSync(join(tmpdir(), 'waveline-bench-embedded-'));
  const [embeddedPort, embeddedGatewayPort] = [await freePort(), await freePort()];
  const embedded = startRole('dev', {
    ...env,
    DATABASE_URL: '',
    REDIS_URL: '',
    WAVELINE_DATA_DIR: dataDir,
    WAVELINE_DEMO: '0',
    PORT: String(embeddedPort),
    GATEWAY_PORT: String(embeddedGatewayPort),
  });
  try {
    await waitUntilReady(`http://127.0.0.1:${offPort}`);
    const { url, token, bytes, etag } = await prepare(base);
    const inProcess = await prepare(`http://127.0.0.1:${embeddedPort}`);
    const bodyFile = join(tmpdir(), `waveline-station-${process.pid}.json`);
    writeFileSync(bodyFile, bytes);
    const barePort = await freePort();
    const bare = await startBare(bodyFile, etag, barePort);
    const koaPort = await freePort();
    const koa = await startBare(bodyFile, etag, koaPort, 'koa');
    try {
      const auth = { authorization: `Bearer ${token}` };
      // Warm both servers (JIT, caches) before measuring.
      await load(url, auth, 2);
      const offUrl = url.replace(base, `http://127.0.0.1:${offPort}`);
      await load(offUrl, auth, 2);
      await load(inProcess.url, { authorization: `Bearer ${inProcess.token}` }, 2);
      await load(`http://127.0.0.1:${barePort}/`, {}, 2);
      await load(`http://127.0.0.1:${koaPort}/`, {}, 2);
      const rows = [];
      const costs = [];
      const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
      const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
      for (const [name, headers] of [
        ['200 with credential', auth],
        ['304 with If-None-Match', { ...auth, 'if-none-match': etag }],
      ] as const) {
        // Alternate the two servers over several rounds and keep the medians: other work on the
        // machine then weighs on both sides alike.
        const ours = [];
        const embeddedRuns = [];
        const embeddedHeaders: Record<string, string> = {
          authorization: `Bearer ${inProcess.token}`,
          ...('if-none-match' in headers ? { 'if-none-match': inProcess.etag } : {}),
        };
        const theirs = [];
        const floor = [];
        const off = [];
        const plain: Record<string, string> = 'if-none-match' in headers ? { 'if-none-match': etag } : {};
        for (let round = 0; round < ROUNDS; round++) {
          ours.push(await measure(url, headers, SECONDS, web.pid!));
          off.push(await measure(offUrl, headers, SECONDS, webOff.pid!));
          embeddedRuns.push(await measure(inProcess.url, embeddedHeaders, SECONDS, embedded.pid!));
          theirs.push(await measure(`http://127.0.0.1:${barePort}/`, plain, SECONDS, bare.pid!));
          floor.push(await measure(`http://127.0.0.1:${koaPort}/`, plain, SECONDS, koa.pid!));
        }
        const k = { rps: median(floor.map((r) => r.rps)), cpu: median(floor.map((r) => r.cpuUsPerRequest)) };
        const w = {
          rps: median(ours.map((r) => r.rps)),
          p99: median(ours.map((r) => r.p99)),
          cpu: median(ours.map((r) => r.cpuUsPerRequest)),
        };
        const e = { rps: median(embeddedRuns.map((r) => r.rps)), p99: median(embeddedRuns.map((r) => r.p99)) };
        const b = {
          rps: median(theirs.map((r) => r.rps)),
          p99: median(theirs.map((r) => r.p99)),
          cpu: median(theirs.map((r) => r.cpuUsPerRequest)),
        };
        const o = {
          rps: median(off.map((r) => r.rps)),
          p99: median(off.map((r) => r.p99)),
          cpu: median(off.map((r) => r.cpuUsPerRequest)),
        };
        costs.push({
          case: name,
          'observability on req/s': Math.round(w.rps),
          'off req/s': Math.round(o.rps),
          'throughput cost': `${(((o.rps - w.rps) / o.rps) * 100).toFixed(1)}%`,
          'on CPU µs/req': w.cpu.toFixed(1),
          'off CPU µs/req': o.cpu.toFixed(1),
          'CPU cost': `${(((w.cpu - o.cpu) / o.cpu) * 100).toFixed(1)}%`,
          'on p99 ms': w.p99,
          'off p99 ms': o.p99,
        });
        rows.push({
          case: name,
          'waveline req/s': Math.round(w.rps),
          'waveline p99 ms': w.p99,
          'bare req/s': Math.round(b.rps),
          'bare p99 ms': b.p99,
          'throughput ratio': `${((w.rps / b.rps) * 100).toFixed(1)}%`,
          'waveline CPU µs/req': w.cpu.toFixed(1),
          'bare CPU µs/req': b.cpu.toFixed(1),
          'CPU ratio (bare/waveline)': `${((b.cpu / w.cpu) * 100).toFixed(1)}%`,
          'minimal Koa req/s': Math.round(k.rps),
          'minimal Koa / bare': `${((k.rps / b.rps) * 100).toFixed(1)}%`,
          'embedded req/s': Math.round(e.rps),
          'embedded p99 ms': e.p99,
          'embedded / service': `${((e.rps / w.rps) * 100).toFixed(1)}%`,
        });
      }
      console.log(
        `\nstation document, median of ${ROUNDS} alternating rounds of ${SECONDS}s per case, 50 connections, web and baseline each in their own process`,
      );
      console.log(
        'throughput ratio = waveline req/s ÷ bare req/s; CPU ratio = bare CPU per request ÷ waveline CPU per request (the share of',
      );
      console.log('bare-server efficiency Waveline reaches; steadier than throughput when other work shares the machine).');
      console.log(
        'embedded = `waveline dev` with DATABASE_URL and REDIS_URL unset (PGlite, in-process adapters), measured in the same rounds.',
      );
      console.table(rows);
      console.log(
        '\nthe cost of observability: the same web process with metrics and request logs (LOG_LEVEL=info, stdout to /dev/null) vs METRICS=0 REQUEST_LOG=0, alternating rounds',
      );
      console.table(costs);
    } finally {
      bare.kill();
      koa.kill();
    }
  } finally {
    await Promise.all([stopRole(web), stopRole(webOff), stopRole(embedded)]);
    rmSync(dataDir, { recursive: true, force: true });
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
