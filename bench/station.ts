// npm run bench:station — station document throughput and p99, with a credential and with If-None-Match,
// beside a bare node:http server answering the same bytes in the same run.
import { writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort, load, measure, startBare, startRole, waitFor } from './support/run.ts';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const ADMIN = 'bench-admin-token-0123456789';
const env = {
  DATABASE_URL: process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/waveline_bench',
  REDIS_URL: process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379/14',
  WAVELINE_ADMIN_TOKEN: ADMIN,
  NODE_ENV: 'production',
  WAVELINE_SECRET: 'bench-secret-0123456789abcdef',
  RATE_LIMIT_LISTENER_PER_MINUTE: '0',
  RATE_LIMIT_GRAPHQL_PER_MINUTE: '0',
  RATE_LIMIT_PUSH_PER_MINUTE: '0',
  RATE_LIMIT_INGEST_PER_MINUTE: '0',
  RATE_LIMIT_ANONYMOUS_PER_MINUTE: '0',
};

async function adminCall(base: string, method: string, path: string, body: unknown): Promise<Record<string, string>> {
  const res = await fetch(`${base}/admin/v1${path}`, { method, headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
  if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${await res.text()}`);
  return (await res.json()) as Record<string, string>;
}

async function main() {
  const migrate = startRole('migrate', env);
  await new Promise((ok) => migrate.on('exit', ok));
  const port = await freePort();
  const web = startRole('web', { ...env, PORT: String(port) });
  const base = `http://127.0.0.1:${port}`;
  try {
    await waitFor(`${base}/healthz`);
    const slug = `bench-${Date.now().toString(36)}`;
    const station = await adminCall(base, 'POST', '/stations', {
      slug,
      name: 'Bench FM',
      timezone: 'Europe/Berlin',
      profile: { tagline: 'Benchmarks all day', streamUrls: [{ label: 'MP3', url: 'https://stream.example/live.mp3', mime: 'audio/mpeg', bitrateKbps: 128 }] },
    });
    const { token } = await adminCall(base, 'POST', `/stations/${station.id}/credentials`, { scopes: ['listener:read'] });
    const url = `${base}/api/v1/stations/${slug}`;
    const first = await fetch(url, { headers: { authorization: `Bearer ${token}` } });
    const bytes = Buffer.from(await first.arrayBuffer());
    const etag = first.headers.get('etag')!;
    const bodyFile = join(tmpdir(), `waveline-station-${process.pid}.json`);
    writeFileSync(bodyFile, bytes);
    const barePort = await freePort();
    const bare = await startBare(bodyFile, etag, barePort);
    try {
      const auth = { authorization: `Bearer ${token}` };
      // Warm both servers (JIT, caches) before measuring.
      await load(url, auth, 2);
      await load(`http://127.0.0.1:${barePort}/`, {}, 2);
      const rows = [];
      for (const [name, headers] of [
        ['200 with credential', auth],
        ['304 with If-None-Match', { ...auth, 'if-none-match': etag }],
      ] as const) {
        const waveline = await measure(url, headers, SECONDS, web.pid!);
        const baseline = await measure(`http://127.0.0.1:${barePort}/`, 'if-none-match' in headers ? { 'if-none-match': etag } : {}, SECONDS, bare.pid!);
        rows.push({
          case: name,
          'waveline req/s': Math.round(waveline.rps),
          'waveline p99 ms': waveline.p99,
          'bare req/s': Math.round(baseline.rps),
          'bare p99 ms': baseline.p99,
          'throughput ratio': `${((waveline.rps / baseline.rps) * 100).toFixed(1)}%`,
          'waveline CPU µs/req': waveline.cpuUsPerRequest.toFixed(1),
          'bare CPU µs/req': baseline.cpuUsPerRequest.toFixed(1),
          'CPU ratio (bare/waveline)': `${((baseline.cpuUsPerRequest / waveline.cpuUsPerRequest) * 100).toFixed(1)}%`,
        });
      }
      console.log(`\nstation document, ${SECONDS}s per case, 50 connections, web and baseline each in their own process`);
      console.log('throughput ratio = waveline req/s ÷ bare req/s; CPU ratio = bare CPU per request ÷ waveline CPU per request (the share of');
      console.log('bare-server efficiency Waveline reaches; steadier than throughput when other work shares the machine).');
      console.table(rows);
    } finally {
      bare.kill();
    }
  } finally {
    web.kill('SIGTERM');
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
