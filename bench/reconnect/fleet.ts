import { performance } from 'node:perf_hooks';
import { BenchClient, type BenchStreamClient } from '../fanout/client.ts';
import { BenchSseClient } from '../fanout/sseClient.ts';
import { serve } from '../fanout/proc.ts';

// The reconnecting fleet: N clients of one gateway (WebSocket, or SSE for an http: URL). Each keeps the
// last cursor it received and counts its messages; `drop` cuts every connection at once (RST, as a lost
// network does), `open` connects them all again — with their cursors or without — and answers when every
// one has received `synced` (WebSocket clients always pass `lastEventId`, empty without a cursor, so
// they get it).

const CURSOR = /"cursor":"([A-Za-z0-9._~-]+)"/;
const SYNCED = Buffer.from('"type":"synced"');
const now = () => performance.timeOrigin + performance.now();

interface Listener {
  client: BenchStreamClient | null;
  cursor: string | null;
  synced: boolean;
  messages: number;
  /** Payload bytes of those messages. */
  bytes: number;
}

let listeners: Listener[] = [];

function openOne(url: string, listener: Listener, useCursor: boolean): Promise<boolean> {
  return new Promise((resolve) => {
    let opened = false;
    // A WebSocket gets `synced` only when it asks for resume: `lastEventId=` (empty) when it has no cursor.
    const cursor = useCursor && listener.cursor ? listener.cursor : null;
    const target = cursor !== null || !url.startsWith('http') ? `${url}&lastEventId=${encodeURIComponent(cursor ?? '')}` : url;
    listener.synced = false;
    listener.messages = 0;
    listener.bytes = 0;
    const Client = url.startsWith('http') ? BenchSseClient : BenchClient;
    listener.client = new Client(new URL(target), {
      onOpen() {
        opened = true;
        resolve(true);
      },
      onFrame(payload) {
        listener.messages++;
        listener.bytes += payload.length;
        const text = payload.toString('latin1');
        const match = CURSOR.exec(text);
        if (match) listener.cursor = match[1];
        if (!listener.synced && payload.includes(SYNCED)) listener.synced = true;
      },
      onClose() {
        if (!opened) resolve(false);
      },
    });
  });
}

async function open(url: string, count: number, useCursor: boolean, inFlight: number, timeoutMs: number) {
  if (listeners.length === 0)
    listeners = Array.from({ length: count }, () => ({ client: null, cursor: null, synced: false, messages: 0, bytes: 0 }));
  const started = now();
  let next = 0;
  let failed = 0;
  const worker = async () => {
    while (next < listeners.length) if (!(await openOne(url, listeners[next++], useCursor))) failed++;
  };
  await Promise.all(Array.from({ length: inFlight }, worker));
  const deadline = Date.now() + timeoutMs;
  let synced = 0;
  while (Date.now() < deadline) {
    synced = listeners.reduce((sum, l) => sum + (l.synced ? 1 : 0), 0);
    if (synced + failed >= listeners.length) break;
    await new Promise((r) => setTimeout(r, 5));
  }
  const messages = listeners.reduce((sum, l) => sum + l.messages, 0);
  const bytes = listeners.reduce((sum, l) => sum + l.bytes, 0);
  return {
    count: listeners.length,
    failed,
    synced,
    ms: Math.round(now() - started),
    messagesPerClient: +(messages / listeners.length).toFixed(2),
    bytesPerClient: Math.round(bytes / listeners.length),
  };
}

serve(async (message) => {
  switch (message.type) {
    case 'open':
      return open(
        String(message.url),
        Number(message.count),
        message.useCursor === true,
        Number(message.inFlight ?? 1000),
        Number(message.timeoutMs ?? 120_000),
      );
    case 'drop':
      for (const listener of listeners) listener.client?.reset();
      return true;
    case 'close':
      for (const listener of listeners) listener.client?.terminate();
      listeners = [];
      return true;
    default:
      return null;
  }
});
