import http from 'node:http';
import WebSocket from 'ws';
import { inTransaction } from '../../src/lib/db.ts';
import { upsertFeedRow } from '../../src/feed/rows.ts';
import type { FeedKind } from '../../src/feed/names.ts';
import type { Services } from '../../src/services.ts';
import { eventually } from './factories.ts';
import { realtimePath } from './feed.ts';

// Listener time on the realtime feed (docs/realtime.md#listener-time-stream): stations with stream keys and
// latencies, now-playing rows observed at a given moment, and listeners of either transport that stamp
// every message with its arrival time (the tests compare it with the moment a change becomes audible).

export type Transport = 'websocket' | 'sse';

/** Sets the station's `profile.streamUrls` (keys and latencies, as the admin API stores them). */
export async function setStreams(
  svc: Services,
  stationId: string,
  streams: Array<{ key?: string; latencySeconds?: number }>,
): Promise<void> {
  const row = await svc.db('stations').where({ id: stationId }).first<{ profile: Record<string, unknown> }>('profile');
  const streamUrls = streams.map((s, i) => ({ label: `Stream ${i + 1}`, url: `https://radio.example.org/${i + 1}`, ...s }));
  await svc
    .db('stations')
    .where({ id: stationId })
    .update({ profile: JSON.stringify({ ...(row?.profile ?? {}), streamUrls }) });
}

/** A now-playing row as the web writes it (presentNowPlaying) for a track observed at `observedAt`. */
export function nowPlayingData(stationId: string, title: string, observedAt: number, durationSeconds = 240): Record<string, unknown> {
  const at = new Date(observedAt).toISOString();
  const receivedAt = new Date().toISOString();
  return {
    contractVersion: '1.0',
    stationId,
    timezone: 'Europe/Berlin',
    track: { artist: 'Artist', title, album: null, durationSeconds, isPlaying: true, observedAt: at, receivedAt },
    elapsedSeconds: 0,
    endsAt: new Date(observedAt + durationSeconds * 1000).toISOString(),
    freshness: { status: 'fresh', thresholdSeconds: 600, ageSeconds: 0, observedAt: at, receivedAt },
  };
}

/** Writes a feed row through the real write path, as of `now` (its time of change). */
export async function writeRowAt(
  svc: Services,
  stationId: string,
  kind: FeedKind,
  data: unknown,
  now = new Date(),
  entry = 'current',
): Promise<void> {
  await inTransaction(svc.db, (tx) => upsertFeedRow(tx, svc.bus, { stationId, kind, entry, data, now }));
}

export interface Stamped {
  at: number;
  /** The message's JSON (the same on both transports). */
  data: any;
  /** The SSE `id:` line (null on the WebSocket). */
  id: string | null;
}

/** A feed listener of either transport; every message stamped with its arrival time. */
export class Listener {
  readonly messages: Stamped[] = [];
  status = 0;
  body = '';
  closed: Promise<{ code: number }>;
  private close_: () => void = () => {};

  private constructor() {
    this.closed = Promise.resolve({ code: 0 });
  }

  static async open(transport: Transport, port: number, query: string, lastEventId?: string): Promise<Listener> {
    const listener = new Listener();
    const path = transport === 'websocket' ? query : query.replace('/v1/realtime?', '/v1/realtime/sse?');
    if (transport === 'websocket') {
      // Always a `lastEventId` parameter (empty for a first connection): these listeners wait for `synced`,
      // which a WebSocket gets only when it asked for resume (docs/realtime.md#resume-reset-and-synced).
      const url = `ws://127.0.0.1:${port}${path}&lastEventId=${encodeURIComponent(lastEventId ?? '')}`;
      const ws = new WebSocket(url, { perMessageDeflate: false });
      ws.on('message', (text) => listener.messages.push({ at: Date.now(), data: JSON.parse(String(text)), id: null }));
      ws.on('error', () => {});
      listener.closed = new Promise((resolve) => ws.once('close', (code) => resolve({ code })));
      listener.close_ = () => ws.terminate();
      await new Promise<void>((resolve, reject) => {
        ws.once('open', () => resolve());
        ws.once('error', reject);
      });
      return listener;
    }
    const headers: Record<string, string> = lastEventId === undefined ? {} : { 'Last-Event-ID': lastEventId };
    let buffer = '';
    let end!: (value: { code: number }) => void;
    listener.closed = new Promise((resolve) => (end = resolve));
    const request = http.get(`http://127.0.0.1:${port}${path}`, { headers, agent: false }, (res) => {
      listener.status = res.statusCode ?? 0;
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        if (listener.status !== 200) return void (listener.body += chunk);
        buffer += chunk;
        let cut: number;
        while ((cut = buffer.indexOf('\n\n')) >= 0) {
          const block = buffer.slice(0, cut);
          buffer = buffer.slice(cut + 2);
          const id = /^id: (.*)$/m.exec(block)?.[1] ?? null;
          const data = /^data: (.*)$/m.exec(block)?.[1];
          if (data !== undefined) listener.messages.push({ at: Date.now(), data: JSON.parse(data), id });
        }
      });
      res.on('close', () => end({ code: 0 }));
    });
    request.on('error', () => end({ code: 0 }));
    listener.close_ = () => request.destroy();
    await eventually(() => listener.status !== 0);
    return listener;
  }

  /** Event messages of one row (`now-playing:current`, …). */
  eventsOf(rowId: string): Stamped[] {
    return this.messages.filter((m) => m.data.type === 'event' && m.data.data.payload.$id === rowId);
  }

  /** A row event's parsed `data_json.data`. */
  static rowData(message: Stamped): any {
    return JSON.parse(message.data.data.payload.data_json).data;
  }

  async waitFor(match: (m: Stamped) => boolean, timeoutMs = 10_000): Promise<Stamped> {
    return (await eventually(() => this.messages.find(match), { timeoutMs, intervalMs: 5 })) as Stamped;
  }

  synced(n = 1): Promise<Stamped> {
    return eventually(() => this.messages.filter((m) => m.data.type === 'synced')[n - 1], {
      timeoutMs: 10_000,
      intervalMs: 5,
    }) as Promise<Stamped>;
  }

  /** The cursor of the last message that carried one. */
  lastCursor(): string {
    for (let i = this.messages.length - 1; i >= 0; i--) if (this.messages[i].data.data?.cursor) return this.messages[i].data.data.cursor;
    throw new Error('no cursor yet');
  }

  close(): void {
    this.close_();
  }
}

/** A feed URL for the station with `stream=`. */
export const streamPath = (stationId: string, stream: string): string => `${realtimePath(stationId)}&stream=${stream}`;

/** The track title of a now-playing event. */
export const titleOf = (message: Stamped): string => Listener.rowData(message)?.track?.title;
