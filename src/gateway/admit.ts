import type { Logger } from '../lib/logger.ts';
import { gatewayResyncs } from './metrics.ts';
import { UNAVAILABLE, type Admission, type Rejection } from './admission.ts';
import type { FeedBridge } from './bridge.ts';
import type { Fanout } from './fanout.ts';
import { begin, prepare, ready, type Connection, type FeedChannel, type Sink } from './session.ts';

// Admitting a connection, the same for both transports: Admission's rules (channels, stream, station
// gates, limits), then the station feeds and delayed views it holds while it is open, and its start
// (session.ts). A transport only frames, writes and closes.

/** What a transport does to the open connections of a station after an admin change. */
export interface StationConnections {
  /** The station may no longer be listened to: the error message, then the close. */
  refuse(stationId: string, rejection: Rejection): void;
  /** The station's modules changed: its connections reconnect and start again from a snapshot. */
  end(stationId: string): void;
}

const isRejection = (value: unknown): value is Rejection => typeof value === 'object' && value !== null && 'code' in value;

/** The stations a connection hears delayed (`stream=` with a latency there), and at what latency. */
const delayedOf = (stationIds: readonly string[], latencies: readonly number[] | null): Array<[string, number]> =>
  latencies ? stationIds.flatMap((stationId, i): Array<[string, number]> => (latencies[i] > 0 ? [[stationId, latencies[i]]] : [])) : [];

export class Admitter {
  private readonly admission: Admission;
  private readonly bridge: FeedBridge;
  private readonly fanout: Fanout;
  private readonly logger: Logger;
  private readonly metrics: boolean;
  private readonly transports: StationConnections[] = [];
  /** Stations with connections still being decided (their connections already list the station). */
  private readonly deciding = new Map<string, number>();

  constructor(admission: Admission, bridge: FeedBridge, fanout: Fanout, logger: Logger, metrics: boolean) {
    this.admission = admission;
    this.bridge = bridge;
    this.fanout = fanout;
    this.logger = logger;
    this.metrics = metrics;
  }

  /** A transport whose connections admin changes reach. */
  serve(transport: StationConnections): void {
    this.transports.push(transport);
  }

  /**
   * The common case decided without waiting: no attempt counting, station gates cached and feeds warm.
   * Returns undefined when something has to be read first (`admitLater`).
   */
  admitNow(conn: Connection): Rejection | null | undefined {
    const { admission, bridge } = this;
    if (admission.limitsAttempts) return undefined;
    const stationIds = admission.channels(conn.query);
    if (isRejection(stationIds)) return stationIds;
    const stream = admission.stream(conn.query);
    if (isRejection(stream)) return stream;
    for (const stationId of stationIds) {
      const known = admission.gateNow(stationId);
      if (!known) return undefined;
      if (known.rejection) return known.rejection;
    }
    const latencies = admission.latencies(stationIds, stream);
    if (isRejection(latencies)) return latencies;
    if (!stationIds.every((stationId) => bridge.isWarm(stationId))) return undefined;
    const delayed = delayedOf(stationIds, latencies);
    if (!delayed.every(([stationId]) => bridge.viewsReady(stationId))) return undefined;
    const refused = this.reserve(conn, stationIds, latencies);
    if (refused) return refused;
    for (const stationId of stationIds) bridge.acquireNow(stationId);
    for (const [stationId, latency] of delayed) bridge.acquireViewNow(stationId, latency);
    return null;
  }

  async admitLater(conn: Connection): Promise<Rejection | null> {
    const limited = await this.admission.takeAttempt(conn.ip);
    if (limited) return limited;
    const stationIds = this.admission.channels(conn.query);
    if (isRejection(stationIds)) return stationIds;
    const stream = this.admission.stream(conn.query);
    if (isRejection(stream)) return stream;
    // Listed at once, so an admin change arriving while this connection waits refuses it too.
    conn.stationIds = stationIds;
    for (const stationId of stationIds) this.deciding.set(stationId, (this.deciding.get(stationId) ?? 0) + 1);
    try {
      return await this.decide(conn, stationIds, stream);
    } finally {
      for (const stationId of stationIds) {
        const count = (this.deciding.get(stationId) ?? 1) - 1;
        if (count > 0) this.deciding.set(stationId, count);
        else this.deciding.delete(stationId);
      }
    }
  }

  /** A connection left: its stations, views and place in the fan-out are given back. */
  release(conn: Connection): void {
    if (!conn.admitted) return;
    conn.admitted = false;
    if (conn.set) this.fanout.leave(conn.set);
    conn.set = null;
    for (const [stationId, latency] of delayedOf(conn.stationIds, conn.latencies)) this.bridge.releaseView(stationId, latency);
    for (const stationId of conn.stationIds) this.bridge.release(stationId);
    this.admission.releaseConnection(conn.ip);
  }

  /**
   * Each channel's state or replay, `synced` (when the client asked for resume), then live events
   * (session.ts): in one turn, so no change falls in between. `corked`: called inside a uWS callback,
   * whose writes uWS corks already (the 101 and every message then leave in one write); otherwise, and
   * for a resume that needs a shared read first (a catch-up, older content bodies) and is answered once
   * it is in, `cork` runs it corked.
   */
  start(conn: Connection, sink: Sink, cork: (run: () => void) => void, corked: boolean): void {
    const feeds = this.channelsOf(conn);
    const run = (): void => {
      if (conn.closed) return;
      const lastEventId = conn.lastEventId;
      conn.lastEventId = null;
      begin(sink, feeds, lastEventId, conn.resume);
    };
    if (ready(feeds, conn.lastEventId, conn.resume)) return corked ? run() : cork(run);
    prepare(feeds, conn.lastEventId)
      .catch((err: unknown) => this.logger.warn({ err }, 'resume read failed; the channels are reset'))
      .then(() => (conn.closed ? undefined : cork(run)));
  }

  /** An admin change may have altered who may listen to a station. */
  stationChanged(stationId: string): void {
    this.admission.forget(stationId);
    if (this.bridge.feed(stationId) || this.deciding.has(stationId)) void this.recheck(stationId);
  }

  /** The bus reconnected: invalidations may have been missed. */
  resubscribed(): void {
    this.admission.forgetAll();
    for (const stationId of this.bridge.stations()) void this.recheck(stationId);
  }

  /** The live feed or the delayed view of each of a connection's stations. */
  private channelsOf(conn: Connection): FeedChannel[] {
    const latencies = conn.latencies;
    const feeds: FeedChannel[] = [];
    for (const [i, stationId] of conn.stationIds.entries()) {
      const feed = latencies && latencies[i] > 0 ? this.bridge.view(stationId, latencies[i]) : this.bridge.feed(stationId);
      if (feed) feeds.push(feed);
    }
    return feeds;
  }

  /** Counts the connection and its stations; the caller has checked every gate. */
  private reserve(conn: Connection, stationIds: readonly string[], latencies: readonly number[] | null): Rejection | null {
    const ip = this.admission.reserveConnection(conn.ip);
    if (typeof ip !== 'string') return ip;
    conn.ip = ip;
    conn.stationIds = stationIds;
    conn.latencies = latencies;
    conn.admitted = true;
    conn.set = this.fanout.join(stationIds, latencies);
    return null;
  }

  private async decide(conn: Connection, stationIds: readonly string[], stream: string | null): Promise<Rejection | null> {
    const { admission, bridge } = this;
    for (const stationId of stationIds) {
      const rejection = await admission.gate(stationId);
      if (rejection) return rejection;
    }
    const latencies = admission.latencies(stationIds, stream);
    if (isRejection(latencies)) return latencies;
    const acquired: string[] = [];
    const views: Array<[string, number]> = [];
    const releaseAll = (): void => {
      for (const [stationId, latency] of views) bridge.releaseView(stationId, latency);
      for (const stationId of acquired) bridge.release(stationId);
    };
    try {
      for (const stationId of stationIds) {
        await bridge.acquire(stationId);
        acquired.push(stationId);
      }
      for (const [stationId, latency] of delayedOf(stationIds, latencies)) {
        await bridge.acquireView(stationId, latency);
        views.push([stationId, latency]);
      }
    } catch (err) {
      this.logger.warn({ err }, 'could not load feed state for a connection');
      releaseAll();
      return UNAVAILABLE;
    }
    const refused = conn.closed ? null : this.reserve(conn, stationIds, latencies);
    if (refused || conn.closed) releaseAll();
    return refused;
  }

  /** After an admin change: connections of a station that may no longer be listened to are refused. */
  private async recheck(stationId: string): Promise<void> {
    const rejection = await this.admission.gate(stationId).catch(() => null);
    if (rejection) {
      for (const transport of this.transports) transport.refuse(stationId, rejection);
      return;
    }
    // A module switched on or off changes which kinds of rows the station's feed sends: its listeners
    // reconnect (1012) and start again from a snapshot of what is delivered now.
    const changed = await this.bridge
      .feed(stationId)
      ?.refreshHiddenKinds()
      .catch(() => false);
    if (!changed) return;
    if (this.metrics) gatewayResyncs.labels('settings_changed').inc();
    for (const transport of this.transports) transport.end(stationId);
  }
}
