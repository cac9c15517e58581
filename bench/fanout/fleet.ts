import { performance } from 'node:perf_hooks';
import { BenchClient, type BenchStreamClient } from './client.ts';
import { BenchSseClient } from './sseClient.ts';
import { serve } from './proc.ts';

// The listener fleet: N WebSocket or SSE clients (an http: URL) in one process (bench/fanout/client.ts). Every client counts frames; every `sampleEvery`-th
// client also reads the `sentAt` stamp the bench put into each row and records publish→receive latency.

const SENT_AT = /sentAt\\?":([0-9.]+)/;
/** A delayed stream's frames are timed from the moment they became audible: `observedMs` + its latency. */
const OBSERVED_MS = /observedMs\\?":([0-9.]+)/;
const now = () => performance.timeOrigin + performance.now();

let clients: Array<BenchStreamClient> = [];
let measuring = false;
let snapshotFrames = 0;
let delivered = 0;
let unexpectedCloses = 0;
let firstAt = 0;
let lastAt = 0;
let latencies = new Float64Array(0);
let samples = 0;
let cpuAtMeasure = 0;
/** The stream's latency when the fleet listens with `stream=` (null: undelayed, timed from publish). */
let delayMs: number | null = null;
const cpuMicros = () => {
  const c = process.cpuUsage();
  return c.user + c.system;
};

function onFrame(sampled: boolean, data: Buffer): void {
  if (!measuring) {
    snapshotFrames++;
    return;
  }
  const at = now();
  delivered++;
  if (firstAt === 0) firstAt = at;
  lastAt = at;
  if (sampled && samples < latencies.length) {
    const text = data.toString('latin1');
    if (delayMs !== null) {
      const observed = OBSERVED_MS.exec(text);
      if (observed) latencies[samples++] = at - (Number(observed[1]) + delayMs);
    } else {
      const match = SENT_AT.exec(text);
      if (match) latencies[samples++] = at - Number(match[1]);
    }
  }
}

async function connect(url: string, count: number, sampleEvery: number, snapshotPerClient: number) {
  const started = now();
  let failed = 0;
  let next = 0;
  const open = (index: number) =>
    new Promise<void>((resolve) => {
      const sampled = index % sampleEvery === 0;
      let opened = false;
      const Client = url.startsWith('http') ? BenchSseClient : BenchClient;
      const client: BenchStreamClient = new Client(new URL(url), {
        onOpen() {
          opened = true;
          clients.push(client);
          resolve();
        },
        onFrame: (payload) => onFrame(sampled, payload),
        onClose() {
          if (!opened) {
            failed++;
            resolve();
          } else if (measuring) unexpectedCloses++;
        },
      });
    });
  const worker = async () => {
    while (next < count) await open(next++);
  };
  await Promise.all(Array.from({ length: 256 }, worker));
  const deadline = Date.now() + 60_000;
  while (snapshotFrames < clients.length * snapshotPerClient && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
  return { connected: clients.length, failed, snapshotFrames, ms: Math.round(now() - started) };
}

function percentile(sorted: Float64Array, p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

serve(async (message) => {
  switch (message.type) {
    case 'connect':
      return connect(String(message.url), Number(message.count), Number(message.sampleEvery), Number(message.snapshotPerClient));
    case 'measure':
      measuring = true;
      cpuAtMeasure = cpuMicros();
      delivered = 0;
      firstAt = lastAt = 0;
      samples = 0;
      latencies = new Float64Array(Number(message.maxSamples));
      delayMs = message.delayMs === null || message.delayMs === undefined ? null : Number(message.delayMs);
      return true;
    case 'wait': {
      const deadline = Date.now() + Number(message.timeoutMs);
      while (delivered < Number(message.expected) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
      const sorted = latencies.slice(0, samples).sort();
      return {
        delivered,
        fleetCpuMicrosPerFrame: (cpuMicros() - cpuAtMeasure) / Math.max(1, delivered),
        unexpectedCloses,
        firstAt,
        lastAt,
        samples,
        p50: percentile(sorted, 50),
        p90: percentile(sorted, 90),
        p99: percentile(sorted, 99),
        min: samples ? sorted[0] : NaN,
        max: samples ? sorted[samples - 1] : NaN,
      };
    }
    case 'close':
      measuring = false;
      for (const ws of clients) ws.terminate();
      clients = [];
      return true;
    default:
      return null;
  }
});
