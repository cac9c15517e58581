import { performance } from 'node:perf_hooks';
import { BenchClient } from '../fanout/client.ts';
import { serve } from '../fanout/proc.ts';

// The listeners of bench:cluster: many WebSocket clients (bench/fanout/client.ts), each on one station's
// feed at one gateway. Every client counts the now-playing frames it receives and times each from the
// stamp the bench put into the track's title (`@<ms since the epoch>`, taken when the ingest was sent);
// a follow-up frame of the same track (artwork kept, say) carries the same stamp and is counted once.

const STAMP = /@([0-9]+\.[0-9]+)/;
const now = () => performance.timeOrigin + performance.now();

interface Listener {
  client: BenchClient;
  station: number;
  lastStamp: string;
  /** The cursor of the last frame (for a resume after the gateway is lost). */
  cursor: string;
  synced: boolean;
}

let listeners: Listener[] = [];
let measuring = false;
let latencies: number[] = [];
let delivered = 0;
/** Bytes of the measured frames (their mean is the payload size the floor's frames are padded to). */
let frameBytes = 0;
let unexpectedCloses = 0;
/** Frames per station index while measuring (each counted once per client). */
let perStation = new Map<number, number>();

const CURSOR = /"cursor":"([^"]+)"/;

function onFrame(listener: Listener, payload: Buffer): void {
  const text = payload.toString('utf8');
  const cursor = CURSOR.exec(text);
  if (cursor) listener.cursor = cursor[1];
  if (text.includes('"synced"')) listener.synced = true;
  if (!measuring || !text.includes('now-playing')) return;
  const stamp = STAMP.exec(text);
  if (!stamp || stamp[1] === listener.lastStamp) return;
  listener.lastStamp = stamp[1];
  latencies.push(now() - Number(stamp[1]));
  delivered++;
  frameBytes += payload.length;
  perStation.set(listener.station, (perStation.get(listener.station) ?? 0) + 1);
}

interface Target {
  url: string;
  station: number;
}

async function open(targets: Target[], resume: boolean): Promise<{ opened: number; failed: number; ms: number; syncedMs: number }> {
  const started = now();
  let failed = 0;
  let next = 0;
  const opened: Listener[] = [];
  const one = (target: Target) =>
    new Promise<void>((resolve) => {
      let open = false;
      const listener: Listener = {
        client: null as unknown as BenchClient,
        station: target.station,
        lastStamp: '',
        cursor: '',
        synced: false,
      };
      listener.client = new BenchClient(new URL(target.url), {
        onOpen() {
          open = true;
          opened.push(listener);
          resolve();
        },
        onFrame: (payload) => onFrame(listener, payload),
        onClose() {
          if (!open) {
            failed++;
            resolve();
          } else if (measuring && listeners.includes(listener)) unexpectedCloses++;
        },
      });
    });
  const worker = async () => {
    while (next < targets.length) await one(targets[next++]);
  };
  await Promise.all(Array.from({ length: 256 }, worker));
  const ms = now() - started;
  const deadline = Date.now() + 60_000;
  while (opened.some((l) => !l.synced) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
  listeners.push(...opened);
  void resume;
  return { opened: opened.length, failed, ms: Math.round(ms), syncedMs: Math.round(now() - started) };
}

const sorted = (values: number[]) => Float64Array.from(values).sort();
const pct = (s: Float64Array, p: number) => (s.length ? s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] : NaN);

serve(async (message) => {
  switch (message.type) {
    case 'open':
      return open(message.targets as Target[], false);
    case 'measure':
      measuring = true;
      latencies = [];
      delivered = 0;
      frameBytes = 0;
      unexpectedCloses = 0;
      perStation = new Map();
      return true;
    case 'wait': {
      const deadline = Date.now() + Number(message.timeoutMs);
      while (delivered < Number(message.expected) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
      measuring = false;
      const s = sorted(latencies);
      return {
        delivered,
        meanFrameBytes: delivered ? Math.round(frameBytes / delivered) : 0,
        unexpectedCloses,
        p50: pct(s, 50),
        p90: pct(s, 90),
        p99: pct(s, 99),
        max: s.length ? s[s.length - 1] : NaN,
        perStation: Object.fromEntries(perStation),
      };
    }
    case 'cursors':
      // Which listeners (by index) are on a gateway, with their last cursors: the bench reopens them elsewhere.
      return listeners.map((l) => ({ station: l.station, cursor: l.cursor }));
    case 'drop': {
      // The listeners of the given stations lose their connection (their gateway is gone).
      const stations = new Set(message.stations as number[]);
      const kept: Listener[] = [];
      const dropped: Array<{ station: number; cursor: string }> = [];
      for (const l of listeners) {
        if (stations.has(l.station)) {
          dropped.push({ station: l.station, cursor: l.cursor });
          try {
            l.client.reset();
          } catch {
            // closed already: its gateway is gone
          }
        } else kept.push(l);
      }
      listeners = kept;
      return dropped;
    }
    case 'close':
      measuring = false;
      for (const l of listeners) l.client.terminate();
      listeners = [];
      return true;
    default:
      return null;
  }
});
