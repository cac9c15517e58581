import http from 'node:http';
import WebSocket from 'ws';
import { loadConfig } from '../../src/config.ts';
import { createLogger } from '../../src/lib/logger.ts';
import { inTransaction } from '../../src/lib/db.ts';
import { deleteFeedRow, upsertFeedRow } from '../../src/feed/rows.ts';
import type { FeedKind } from '../../src/feed/names.ts';
import { startGateway, type Gateway, type GatewayOptions } from '../../src/gateway/server.ts';
import type { Services } from '../../src/services.ts';
import { eventually } from './factories.ts';

// Real gateways on ephemeral ports and real `ws` clients for the realtime feed tests.

const gateways = new Set<Gateway>();

export async function startTestGateway(env: Record<string, string> = {}, options: GatewayOptions = {}): Promise<Gateway & { url: string }> {
  const config = loadConfig({ ...process.env, ...env });
  const gateway = await startGateway(config, createLogger(config, 'test-gateway'), 0, options);
  gateways.add(gateway);
  const close = gateway.close.bind(gateway);
  return {
    ...gateway,
    url: `ws://127.0.0.1:${gateway.port}`,
    close: async () => {
      gateways.delete(gateway);
      await close();
    },
  };
}

export async function closeTestGateways(): Promise<void> {
  for (const gateway of [...gateways]) await gateway.close();
  gateways.clear();
}

export const channelOf = (stationId: string) => `stations.${stationId}.feed`;

/**
 * The rows every station's feed holds from its creation (docs/realtime.md#what-arrives): `schedule`,
 * `on-air` and `now-playing`, in the order a connection's state sends them.
 */
export const STATION_START_ROWS = ['schedule:current', 'on-air:current', 'now-playing:current'] as const;

export function realtimePath(...stationIds: string[]): string {
  return `/v1/realtime?${stationIds.map((id) => `channels[]=${encodeURIComponent(channelOf(id))}`).join('&')}`;
}

/**
 * A WebSocket feed path that asks for resume: `lastEventId={cursor}`, or `lastEventId=` (the full state
 * plus `synced`). Without the parameter a WebSocket receives `event` and `error` messages only.
 */
export const withCursor = (path: string, cursor = ''): string => `${path}&lastEventId=${encodeURIComponent(cursor)}`;

export interface EventFrame {
  type: 'event';
  data: {
    events: string[];
    channels: string[];
    timestamp: string;
    payload: { $id: string; station_id: string; kind: string; entry: string; data_json: string; $updatedAt: string };
    cursor: string;
  };
}

/** A listener app's socket: records every frame and how the socket closed. */
export class FeedClient {
  readonly ws: WebSocket;
  /** Every message but `synced` (the tests of the state and events count these). */
  readonly frames: any[] = [];
  /** Every message, `synced` included, in arrival order. */
  readonly messages: any[] = [];
  readonly opened: Promise<void>;
  readonly closed: Promise<{ code: number; reason: string }>;
  closeCode: number | null = null;

  constructor(url: string, options: WebSocket.ClientOptions = {}) {
    this.ws = new WebSocket(url, { perMessageDeflate: false, ...options });
    this.ws.on('message', (data) => {
      const message = JSON.parse(String(data));
      this.messages.push(message);
      if (message.type !== 'synced') this.frames.push(message);
    });
    this.opened = new Promise((resolve, reject) => {
      this.ws.once('open', () => resolve());
      this.ws.once('error', reject);
    });
    this.closed = new Promise((resolve) => {
      this.ws.once('close', (code, reason) => {
        this.closeCode = code;
        resolve({ code, reason: String(reason) });
      });
    });
    this.ws.on('error', () => {});
  }

  static async connect(base: string, path: string, options: WebSocket.ClientOptions = {}): Promise<FeedClient> {
    const client = new FeedClient(base + path, options);
    await client.opened;
    return client;
  }

  /**
   * Connects and waits for the current state (`stateRows` events). Only then is every later change sure
   * to arrive as a live event: a change committed while a new connection is being decided (a few
   * milliseconds after open, when the gateway has to load the station) is part of the current state.
   */
  static async ready(base: string, path: string, stateRows: number, options: WebSocket.ClientOptions = {}): Promise<FeedClient> {
    const client = await FeedClient.connect(base, path, options);
    await client.waitFrames(stateRows);
    return client;
  }

  /** Waits for the `synced` message (after the state or replay of every channel; resume asked) and returns it. */
  async waitSynced(timeoutMs = 5000): Promise<any> {
    return eventually(() => this.messages.find((m) => m.type === 'synced'), { timeoutMs });
  }

  /** The cursor of the last message that carried one. */
  lastCursor(): string | undefined {
    for (let i = this.messages.length - 1; i >= 0; i--) if (this.messages[i].data?.cursor) return this.messages[i].data.cursor;
    return undefined;
  }

  events(): EventFrame[] {
    return this.frames.filter((f) => f.type === 'event');
  }

  /** Events of one row (`$id`), in arrival order. */
  eventsOf(rowId: string): EventFrame[] {
    return this.events().filter((f) => f.data.payload.$id === rowId);
  }

  /** Waits until `count` frames have arrived. */
  async waitFrames(count: number, timeoutMs = 5000): Promise<any[]> {
    await eventually(() => this.frames.length >= count, { timeoutMs });
    return this.frames;
  }

  /** Waits for an event matching `match` and returns it. */
  async waitEvent(match: (frame: EventFrame) => boolean, timeoutMs = 5000): Promise<EventFrame> {
    return (await eventually(() => this.events().find(match), { timeoutMs })) as EventFrame;
  }

  /** The state a client builds from its frames: row id → parsed data_json, removed rows dropped. */
  state(): Map<string, unknown> {
    const rows = new Map<string, unknown>();
    for (const frame of this.events()) {
      const { payload, events } = frame.data;
      if (events[0].endsWith('.delete')) rows.delete(payload.$id);
      else rows.set(payload.$id, JSON.parse(payload.data_json));
    }
    return rows;
  }

  close(): void {
    this.ws.terminate();
  }
}

export async function writeRow(svc: Services, stationId: string, kind: FeedKind, entry: string, data: unknown): Promise<void> {
  await inTransaction(svc.db, (tx) => upsertFeedRow(tx, svc.bus, { stationId, kind, entry, data }));
}

export async function removeRow(svc: Services, stationId: string, kind: FeedKind, entry: string): Promise<void> {
  await inTransaction(svc.db, (tx) => deleteFeedRow(tx, svc.bus, { stationId, kind, entry }));
}

/** One message of an SSE stream as the wire carries it. */
export interface SseMessage {
  id: string | null;
  data: any;
  /** Field names of the message, in order (`id`, `data`; never `event`). */
  fields: string[];
}

/**
 * A raw SSE client over node:http: the status and headers, the stream's text, its messages (`id:` and
 * `data:` lines), comment lines and `retry:` values, and when the server ended it.
 */
export class SseFeedClient {
  readonly request: http.ClientRequest;
  status = 0;
  headers: http.IncomingHttpHeaders = {};
  text = '';
  body = '';
  readonly messages: SseMessage[] = [];
  readonly comments: string[] = [];
  readonly retries: number[] = [];
  readonly ended: Promise<void>;
  readonly answered: Promise<void>;
  response: http.IncomingMessage | null = null;
  private buffer = '';

  constructor(url: string, headers: Record<string, string> = {}) {
    let end!: () => void;
    let answer!: () => void;
    this.ended = new Promise((resolve) => (end = resolve));
    this.answered = new Promise((resolve) => (answer = resolve));
    this.request = http.get(url, { headers, agent: false }, (res) => {
      this.response = res;
      this.status = res.statusCode ?? 0;
      this.headers = res.headers;
      answer();
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        this.text += chunk;
        if (this.status !== 200) this.body += chunk;
        else this.parse(chunk);
      });
      res.on('end', end);
      res.on('close', end);
      res.on('error', end);
    });
    this.request.on('error', () => {
      answer();
      end();
    });
  }

  static async open(url: string, headers: Record<string, string> = {}): Promise<SseFeedClient> {
    const client = new SseFeedClient(url, headers);
    await client.answered;
    return client;
  }

  private parse(chunk: string): void {
    this.buffer += chunk;
    let cut: number;
    while ((cut = this.buffer.indexOf('\n\n')) >= 0) {
      const block = this.buffer.slice(0, cut);
      this.buffer = this.buffer.slice(cut + 2);
      let id: string | null = null;
      let data: string | null = null;
      const fields: string[] = [];
      for (const line of block.split('\n')) {
        if (line.startsWith(':')) {
          this.comments.push(line);
          continue;
        }
        const sep = line.indexOf(':');
        const field = sep < 0 ? line : line.slice(0, sep);
        const value = sep < 0 ? '' : line.slice(sep + 1).replace(/^ /, '');
        if (field === 'retry') this.retries.push(Number(value));
        else {
          fields.push(field);
          if (field === 'id') id = value;
          if (field === 'data') data = data === null ? value : `${data}\n${value}`;
        }
      }
      if (data !== null) this.messages.push({ id, data: JSON.parse(data), fields });
    }
  }

  /** The messages' JSON, in order. */
  data(): any[] {
    return this.messages.map((m) => m.data);
  }

  async waitSynced(timeoutMs = 5000): Promise<SseMessage> {
    return (await eventually(() => this.messages.find((m) => m.data.type === 'synced'), { timeoutMs })) as SseMessage;
  }

  async waitMessage(match: (data: any) => boolean, timeoutMs = 5000): Promise<SseMessage> {
    return (await eventually(() => this.messages.find((m) => match(m.data)), { timeoutMs })) as SseMessage;
  }

  close(): void {
    this.request.destroy();
  }
}

export function ssePath(...stationIds: string[]): string {
  return realtimePath(...stationIds).replace('/v1/realtime?', '/v1/realtime/sse?');
}

/**
 * Waits until a gateway has applied a change: a listener of the station sees an event matching `match`
 * (in its state or live). A resume answered before the gateway got the change from Redis would get that
 * change as a live event right after `synced` instead — correct, but not what a test of the replay reads.
 */
export async function gatewayHas(base: string, stationId: string, match: (frame: EventFrame) => boolean): Promise<void> {
  const watcher = await FeedClient.connect(base, realtimePath(stationId));
  try {
    await watcher.waitEvent(match);
  } finally {
    watcher.close();
  }
}
