import type { Socket } from 'node:net';
import type { Db } from '../../lib/db.ts';
import type { Services } from '../../services.ts';
import type { MessageRow } from './model.ts';
import { currentPosition } from './positions.ts';
import { presentMessage } from './presenter.ts';

// The studio stream (docs/inbox.md, "The studio stream"): Server-Sent Events of every new or changed
// message, with the station's stream position as the event id. One hub per process keeps the open
// streams by station. A write announces its station through the invalidation bus (Redis pub/sub, or
// in-process when embedded: every process hears it at once); the hub then reads the station's messages
// past the position its streams have reached — from Postgres, the one source of truth, so a lost
// announcement costs at most one tick: every second the hub also compares each station's last position
// with what its streams have read. The same read replays a stream that resumes with Last-Event-ID.

const BATCH = 200;
const TICK_MS = 1000;
/** A comment line this often keeps proxies from closing an idle stream. */
const PING_EVERY_TICKS = 15;
/** A stream this far behind (bytes not yet taken by the client) is ended; its client resumes. */
const MAX_BUFFERED_BYTES = 1 << 20;

/** Where a stream's frames go: the response body, its socket (for a draining server), and its end. */
export interface StreamSink {
  write(chunk: string): void;
  buffered(): number;
  socket: Socket;
  /** Ends the response; with `closeConnection`, its connection too (a draining server waits for it). */
  end(closeConnection: boolean): void;
}

interface OpenStream {
  sink: StreamSink;
  /** The position of the last message this stream was sent. */
  position: number;
  /** Whether `ready` was sent (after the first read: the replay, or nothing). */
  ready: boolean;
}

interface StationStreams {
  streams: Set<OpenStream>;
  reading: Promise<void> | null;
  again: boolean;
}

const messageFrame = (row: MessageRow): string => `id: ${row.seq}\nevent: message\ndata: ${JSON.stringify(presentMessage(row))}\n\n`;

type HubServices = Pick<Services, 'db' | 'invalidation' | 'logger'>;

export class InboxStreams {
  private readonly db: Db;
  private readonly logger: Services['logger'];
  private readonly stations = new Map<string, StationStreams>();
  private timer: NodeJS.Timeout | null = null;
  private ticks = 0;

  constructor(svc: HubServices) {
    this.db = svc.db;
    this.logger = svc.logger;
    svc.invalidation.on('inbox', (stationId) => this.changed(stationId));
  }

  /**
   * Opens a stream of the station's messages after `after` (a resumed stream), or from now (null, or a
   * position the station has not reached: an id from elsewhere). Answers the function that closes it.
   */
  async open(stationId: string, after: number | null, sink: StreamSink): Promise<() => void> {
    const current = await currentPosition(this.db, stationId);
    const stream: OpenStream = { sink, position: after !== null && after <= current ? after : current, ready: false };
    let station = this.stations.get(stationId);
    if (!station) this.stations.set(stationId, (station = { streams: new Set(), reading: null, again: false }));
    station.streams.add(stream);
    this.startTicking();
    this.changed(stationId);
    return () => this.close(stationId, stream);
  }

  /** Open streams in this process (for tests and the metrics of a later day). */
  get size(): number {
    let n = 0;
    for (const station of this.stations.values()) n += station.streams.size;
    return n;
  }

  private close(stationId: string, stream: OpenStream, closeConnection = false): void {
    const station = this.stations.get(stationId);
    if (!station?.streams.delete(stream)) return;
    stream.sink.end(closeConnection);
    if (station.streams.size === 0 && !station.reading) this.stations.delete(stationId);
    if (this.stations.size === 0) this.stopTicking();
  }

  /** The station has news: read it for its streams (one read at a time; news during a read reads again). */
  private changed(stationId: string): void {
    const station = this.stations.get(stationId);
    if (!station) return;
    if (station.reading) {
      station.again = true;
      return;
    }
    station.reading = this.read(stationId, station)
      .catch((err: unknown) => this.logger.warn({ err, stationId }, 'could not read inbox messages for the studio streams'))
      .finally(() => {
        station.reading = null;
        if (station.again) {
          station.again = false;
          this.changed(stationId);
        } else if (station.streams.size === 0) this.stations.delete(stationId);
      });
  }

  private async read(stationId: string, station: StationStreams): Promise<void> {
    for (;;) {
      if (station.streams.size === 0) return;
      const from = Math.min(...[...station.streams].map((s) => s.position));
      const rows: MessageRow[] = await this.db<MessageRow>('inbox_messages')
        .where({ station_id: stationId })
        .andWhere('seq', '>', from)
        .orderBy('seq')
        .limit(BATCH);
      for (const stream of station.streams) {
        let chunk = '';
        for (const row of rows) {
          if (Number(row.seq) <= stream.position) continue;
          chunk += messageFrame(row);
          stream.position = Number(row.seq);
        }
        if (rows.length < BATCH && !stream.ready) {
          stream.ready = true;
          chunk += `id: ${stream.position}\nevent: ready\ndata: {}\n\n`;
        }
        if (chunk) this.send(stationId, stream, chunk);
      }
      if (rows.length < BATCH) return;
    }
  }

  private send(stationId: string, stream: OpenStream, chunk: string): void {
    stream.sink.write(chunk);
    if (stream.sink.buffered() > MAX_BUFFERED_BYTES) {
      this.logger.info({ stationId }, 'an inbox stream fell too far behind and was ended (its client resumes)');
      this.close(stationId, stream, true);
    }
  }

  private startTicking(): void {
    if (this.timer) return;
    this.timer = setInterval(() => void this.tick(), TICK_MS);
    this.timer.unref();
  }

  private stopTicking(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  /**
   * Every second: a stream whose server stopped listening (a draining process) ends, so its client
   * resumes on another; a station whose last position is past what its streams read is read (a lost
   * announcement); every 15 s a comment line.
   */
  private async tick(): Promise<void> {
    const ping = ++this.ticks % PING_EVERY_TICKS === 0;
    for (const [stationId, station] of this.stations) {
      for (const stream of station.streams) {
        const server = (stream.sink.socket as Socket & { server?: { listening: boolean } }).server;
        if (server && !server.listening) this.close(stationId, stream, true);
        else if (ping) this.send(stationId, stream, ': ping\n\n');
      }
    }
    const ids = [...this.stations.keys()];
    if (ids.length === 0) return;
    try {
      const rows: Array<{ station_id: string; seq: string }> = await this.db('inbox_positions')
        .whereIn('station_id', ids)
        .select('station_id', 'seq');
      for (const row of rows) {
        const station = this.stations.get(row.station_id);
        if (station && [...station.streams].some((s) => s.position < Number(row.seq))) this.changed(row.station_id);
      }
    } catch (err) {
      this.logger.warn({ err }, 'could not check the inbox positions for the studio streams');
    }
  }
}

const hubs = new WeakMap<object, InboxStreams>();

/** The process's hub (one per set of services). */
export function inboxStreams(svc: HubServices): InboxStreams {
  let hub = hubs.get(svc.invalidation);
  if (!hub) hubs.set(svc.invalidation, (hub = new InboxStreams(svc)));
  return hub;
}

/**
 * The position a stream resumes after: the `Last-Event-ID` header, else the `lastEventId` parameter (a
 * page's first connection); null (from now) when neither is a position.
 */
export function resumeAfter(header: string | undefined, parameter: string | undefined): number | null {
  const value = header !== undefined && header !== '' ? header : parameter;
  if (value === undefined || !/^\d{1,15}$/.test(value.trim())) return null;
  return Number(value.trim());
}
