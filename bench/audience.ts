// npm run bench:audience — the audience feature at scale (docs/audience.md#cost, figures in docs/benchmarks.md#audience):
// 1. The poller: 500 stations × 4 streams (Icecast `stats`) against a local status server (its own
//    process, so its CPU is not counted), BENCH_TICKS ticks; per tick its wall time and this process'
//    CPU (fetch, parse, the two batched writes), and the CPU per station per poll.
// 2. The SoundExchange report of a month of 15 000 plays with 4 streams' samples every 30 s (≈ 357 000
//    samples): the first request fixes every play's performances (what the audience.fix job would have
//    done over the month), the next ones only stream; time and the peak heap growth while streaming.
//
// Own database (BENCH_DATABASE_URL, recreated); nothing in Redis.
import { spawn } from 'node:child_process';
import { Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { loadConfig } from '../src/config.ts';
import { ManualClock, systemClock } from '../src/lib/clock.ts';
import { createDb } from '../src/lib/db.ts';
import { createLogger } from '../src/lib/logger.ts';
import { migrateLatest } from '../src/lib/migrate.ts';
import { pollTick } from '../src/domains/audience/poll.ts';
import { prepareReport, reportMonth, reportText } from '../src/domains/audience/report.ts';
import { BENCH_ENV, median, recreateDatabase } from './support.ts';

const STATIONS = Number(process.env.BENCH_STATIONS ?? 500);
const STREAMS = 4;
const TICKS = Number(process.env.BENCH_TICKS ?? 5);
const PLAYS = Number(process.env.BENCH_PLAYS ?? 15_000);
const REPORTS = 3;
const databaseUrl = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/waveline_bench_audience';

/** An Icecast-like status server in its own process: four mounts, counts that move. */
async function startStatusServer(): Promise<{ url: string; stop(): void }> {
  const script = `
    const http = require('node:http');
    let n = 0;
    const server = http.createServer((req, res) => {
      n++;
      const port = server.address().port;
      const source = ['a', 'b', 'c', 'd'].map((m, i) => ({ listenurl: 'http://127.0.0.1:' + port + '/' + m + '.mp3', listeners: (n + i) % 500, server_name: 'bench', genre: 'various' }));
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ icestats: { admin: 'bench', host: '127.0.0.1', server_id: 'Icecast 2.4.4', source } }));
    });
    server.keepAliveTimeout = 60000;
    server.listen(0, '127.0.0.1', () => console.log(server.address().port));`;
  const child = spawn(process.execPath, ['-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
  const port = await new Promise<number>((ok) => child.stdout!.once('data', (d) => ok(Number(String(d).trim()))));
  return { url: `http://127.0.0.1:${port}/status-json.xsl`, stop: () => child.kill() };
}

async function main(): Promise<void> {
  await recreateDatabase(databaseUrl);
  const config = loadConfig({
    ...process.env,
    ...BENCH_ENV,
    DATABASE_URL: databaseUrl,
    REDIS_URL: '',
    LOG_LEVEL: 'error',
    NODE_ENV: 'production',
  });
  const db = createDb(databaseUrl);
  await migrateLatest(db);
  const logger = createLogger(config, 'bench');
  const status = await startStatusServer();
  try {
    // --- the poller ---
    const stations = Array.from({ length: STATIONS }, (_, i) => ({
      id: `bench-${i}`,
      slug: `bench-${i.toString().padStart(4, '0')}`,
      name: `Bench ${i}`,
      timezone: 'America/New_York',
      profile: JSON.stringify({
        streamUrls: ['a', 'b', 'c', 'd'].slice(0, STREAMS).map((m, s) => ({
          url: `https://stream.example.org/${m}`,
          key: `s${s}`,
          latencySeconds: s * 10,
          stats: { kind: 'icecast', url: status.url, mount: `/${m}.mp3` },
        })),
      }),
    }));
    for (let i = 0; i < stations.length; i += 500) await db('stations').insert(stations.slice(i, i + 500));
    const svc = { db, clock: systemClock, logger, config };
    await pollTick(svc); // warm-up: connections, JIT
    const walls: number[] = [];
    const cpus: number[] = [];
    for (let t = 0; t < TICKS; t++) {
      // Each tick at its own second: samples are keyed by (station, stream, at).
      await new Promise((r) => setTimeout(r, 1000 - (Date.now() % 1000) + 5));
      const cpu0 = process.cpuUsage();
      const wall0 = performance.now();
      const result = await pollTick(svc);
      walls.push(performance.now() - wall0);
      const cpu = process.cpuUsage(cpu0);
      cpus.push((cpu.user + cpu.system) / 1000);
      if (result.stored !== STATIONS * STREAMS) throw new Error(`tick stored ${result.stored}: ${JSON.stringify(result)}`);
    }
    const wall = median(walls);
    const cpu = median(cpus);
    console.log(`poller: ${STATIONS} stations × ${STREAMS} streams, ${TICKS} ticks (median)`);
    console.log(
      `  wall per tick        ${wall.toFixed(0)} ms  (poll interval ${config.audience.pollSeconds} s: ${((wall / (config.audience.pollSeconds * 1000)) * 100).toFixed(1)} % of it)`,
    );
    console.log(`  CPU per tick         ${cpu.toFixed(0)} ms  (this process: requests, parsing, two batched writes)`);
    console.log(
      `  CPU per station/poll ${((cpu / STATIONS) * 1000).toFixed(0)} µs  (${((cpu / STATIONS / STREAMS) * 1000).toFixed(0)} µs per stream)`,
    );
    console.log(
      `  samples written      ${STATIONS * STREAMS} per tick (${((STATIONS * STREAMS) / config.audience.pollSeconds).toFixed(0)}/s at the default interval)`,
    );

    // --- the report ---
    const station = stations[0];
    const month = reportMonth('2026-10', station.timezone);
    const spanMs = month.to.getTime() - month.from.getTime();
    const step = spanMs / PLAYS;
    await db.raw(
      `INSERT INTO observations (id, station_id, fingerprint, artist, title, album, duration_seconds, is_playing, observed_at, received_at, sort_at, outcome, accepted, isrc)
       SELECT gen_random_uuid(), ?, 'f' || g, 'Artíst ' || (g % 300), 'Sóng title ' || g, 'Album ' || (g % 50), 170, true,
              ? ::timestamptz + (g * ?::double precision * interval '1 millisecond'), ? ::timestamptz + (g * ?::double precision * interval '1 millisecond'),
              ? ::timestamptz + (g * ?::double precision * interval '1 millisecond'), 'recorded', true, 'USRC1760' || lpad((g % 10000)::text, 4, '0')
         FROM generate_series(0, ? - 1) g`,
      [station.id, month.from, step, month.from, step, month.from, step, PLAYS],
    );
    await db.raw(
      `INSERT INTO listener_samples (station_id, stream_key, at, listeners, source)
       SELECT ?, 's' || s, ? ::timestamptz + g * interval '30 seconds', (g * 7 + s * 13) % 400, 'poll'
         FROM generate_series(0, ?) g CROSS JOIN generate_series(0, ?) s`,
      [station.id, month.from, Math.floor(spanMs / 30_000) - 1, STREAMS - 1],
    );
    await db.raw('ANALYZE');
    const royalties = { serviceName: 'Bench Radio', transmissionCategory: 'C' as const };
    const reportSvc = { db, config, clock: new ManualClock(month.to.getTime() + 86_400_000) };
    const fix0 = performance.now();
    const unknown = await prepareReport(reportSvc, station.id, month);
    const fixMs = performance.now() - fix0;
    const times: number[] = [];
    let bytes = 0;
    let peakHeap = 0;
    for (let r = 0; r < REPORTS; r++) {
      globalThis.gc?.();
      const base = process.memoryUsage().heapUsed;
      let peak = 0;
      const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().heapUsed - base)), 5);
      const t0 = performance.now();
      await prepareReport(reportSvc, station.id, month);
      bytes = 0;
      await pipeline(
        reportText(db, station.id, royalties, month),
        new Writable({ write: (chunk, _e, done) => ((bytes += chunk.length), done()) }),
      );
      times.push(performance.now() - t0);
      clearInterval(sampler);
      peakHeap = Math.max(peakHeap, peak);
    }
    console.log(`report: ${PLAYS} plays, ${STREAMS} streams' samples every 30 s for the month`);
    console.log(`  first request (fixes every play's performances, then counts)  ${fixMs.toFixed(0)} ms; ${unknown} unknown`);
    console.log(`  report (count + stream ${(bytes / 1024).toFixed(0)} KiB), median of ${REPORTS}  ${median(times).toFixed(0)} ms`);
    console.log(
      `  peak heap growth while streaming  ${(peakHeap / 1024 / 1024).toFixed(1)} MiB${globalThis.gc ? '' : ' (run with --expose-gc for a cleaner baseline)'}`,
    );
  } finally {
    status.stop();
    await db.destroy();
  }
}

await main();
