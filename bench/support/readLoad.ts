// The read load of a bench, in a process of its own (forked by the bench, kept for the whole run so its
// code is warm by the measured phases): for each message {url, headers, seconds, rate} from the parent,
// autocannon against `url` at `rate` requests/s over 10 connections for `seconds`, answered (IPC) with
// its percentiles and its five slowest reads, each with when it was answered (ms from the start). Apart
// from the process generating the other load (bench:inbox's votes), a pause of that process — its
// garbage collection after thousands of requests, its timers — does not hold back the reads' answers and
// count as their latency: what the reads measure is the server's.
//   fork('bench/support/readLoad.ts'); then send {url, headers, seconds, rate} per phase
import { performance } from 'node:perf_hooks';
import autocannon from 'autocannon';

interface Phase {
  url: string;
  headers: Record<string, string>;
  seconds: number;
  rate: number;
}

const round = (n: number, digits = 2) => Math.round(n * 10 ** digits) / 10 ** digits;

process.on('message', (phase: Phase | 'exit') => {
  if (phase === 'exit') return process.disconnect();
  const started = performance.now();
  const answered: Array<[number, number]> = [];
  const instance = autocannon(
    { url: phase.url, headers: phase.headers, duration: phase.seconds, connections: 10, overallRate: phase.rate, pipelining: 1 },
    (err, r) => {
      if (err) return process.send!({ error: String(err) });
      const slowest = answered
        .sort((a, b) => b[1] - a[1])
        .slice(0, 5)
        .map(([at, ms]) => `${round(ms, 1)} ms at ${Math.round(at)} ms`);
      process.send!({
        requests: r.requests.total,
        p50: r.latency.p50,
        p99: r.latency.p99,
        max: r.latency.max,
        non2xx: r.non2xx,
        errors: r.errors,
        slowest,
      });
    },
  );
  instance.on('response', (_client, _status, _bytes, ms) => answered.push([performance.now() - started, ms]));
});
process.send!('ready');
