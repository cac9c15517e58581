// The read load of a bench, in a process of its own (forked by the bench): autocannon against `url` at
// `rate` requests/s over 10 connections for `seconds`, answering the parent (IPC) with its percentiles
// and its five slowest reads, each with when it was answered (ms from the start). Apart from the process
// generating the other load (bench:inbox's votes), a pause of that process — its garbage collection
// after thousands of requests, its timers — does not hold back the reads' answers and count as their
// latency: what the reads measure is the server's.
//   node bench/support/readLoad.ts <url> <headers JSON> <seconds> <rate>
import { performance } from 'node:perf_hooks';
import autocannon from 'autocannon';

const [url, headersJson, secondsArg, rateArg] = process.argv.slice(2);
const seconds = Number(secondsArg);
const rate = Number(rateArg);
const round = (n: number, digits = 2) => Math.round(n * 10 ** digits) / 10 ** digits;

process.on('message', () => {
  const started = performance.now();
  const answered: Array<[number, number]> = [];
  const instance = autocannon(
    {
      url,
      headers: JSON.parse(headersJson) as Record<string, string>,
      duration: seconds,
      connections: 10,
      overallRate: rate,
      pipelining: 1,
    },
    (err, r) => {
      if (err) {
        process.send!({ error: String(err) });
      } else {
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
      }
      process.disconnect();
    },
  );
  instance.on('response', (_client, _status, _bytes, ms) => answered.push([performance.now() - started, ms]));
});
process.send!('ready');
