import { randomBytes } from 'node:crypto';
import type { FeedMessage } from '../feed/bus.ts';
import { FEED_KINDS } from '../feed/names.ts';
import { splitLsn } from '../lib/invalidation.ts';
import { keys } from '../lib/keys.ts';
import { createBlockingRedis, type Redis } from '../lib/redis.ts';
import type { Logger } from '../lib/logger.ts';
import { StationFeed, type FeedChange } from './stationFeed.ts';
import { HeardViews, type DelayedView } from './delay.ts';
import { metricsEnabled } from '../lib/metrics.ts';
import { gatewayResyncs, gatewayStations } from './metrics.ts';
import type { FeedStore, StoredRow } from './store.ts';

interface Subscription {
  feed: StationFeed;
  /** The station's delayed views (connections with `stream=`), by latency. */
  views: HeardViews;
  refs: number;
  ready: Promise<StationFeed>;
  /** Subscribed and loaded: new listeners can be served without waiting. */
  warm: boolean;
  /** Pending drop after the last listener left (LINGER_MS). */
  linger: NodeJS.Timeout | null;
}

/**
 * How long a station's feed stays subscribed and loaded after its last listener left: listeners of a
 * dropped network or a restarted node come back within seconds, and are then served from memory, at once
 * (no reload of the station, no query).
 */
const LINGER_MS = 2000;

/** What the bridge tells the gateway. */
export interface BridgeEvents {
  /** A change of a station's feed, for its live connections. */
  change(stationId: string, change: FeedChange): void;
  /** A now-playing or on-air change as a station's delayed view of `latencyMs` releases it. */
  delayedChange(stationId: string, latencyMs: number, change: FeedChange): void;
  /** An admin change may have altered who may listen to a station. */
  stationChanged(stationId: string): void;
  /** After a reconnection, when invalidation messages may have been missed. */
  resubscribed(): void;
}

export interface BridgeOptions {
  /** Fixed delay between Redis reconnection attempts (tests use it to hold the subscription down). */
  reconnectDelayMs?: number;
}

const KINDS = new Set<string>(FEED_KINDS);

function asRow(message: unknown): StoredRow | null {
  const m = message as Partial<FeedMessage> | null;
  if (!m || typeof m.seq !== 'number' || typeof m.entry !== 'string' || typeof m.kind !== 'string' || !KINDS.has(m.kind)) return null;
  return { kind: m.kind, entry: m.entry, seq: m.seq, deleted: m.deleted === true, data: m.data ?? null, updatedAt: String(m.updatedAt) };
}

/**
 * The gateway's Redis side. One subscriber connection carries the invalidation channel and the feed
 * channel of every station this gateway has listeners for: subscribed on the first listener,
 * unsubscribed after the last. Each message is parsed once and handed to its StationFeed, which
 * publishes the frame to the station's uWS topic.
 *
 * Subscriptions are restored by hand after a reconnection (not by ioredis), so the catch-up read of
 * every station starts only once the channels are live again: nothing published in between is lost.
 */
export class FeedBridge {
  /** CLIENT SETNAME of the subscriber connection (lets operators and tests find it). */
  readonly clientName = `waveline-gateway-${process.pid}-${randomBytes(4).toString('hex')}`;
  private readonly subscriber: Redis;
  private readonly subscriptions = new Map<string, Subscription>();
  private readonly byChannel = new Map<string, StationFeed>();
  private readonly store: FeedStore;
  private readonly events: BridgeEvents;
  private readonly logger: Logger;
  private connectedBefore = false;
  private closing = false;

  constructor(redisUrl: string, store: FeedStore, events: BridgeEvents, logger: Logger, options: BridgeOptions = {}) {
    this.store = store;
    this.events = events;
    this.logger = logger;
    const delay = options.reconnectDelayMs;
    this.subscriber = createBlockingRedis(redisUrl, {
      connectionName: this.clientName,
      autoResubscribe: false,
      maxRetriesPerRequest: null,
      retryStrategy: (times) => delay ?? Math.min(times * 100, 2000),
    });
    this.subscriber.on('error', (err) => logger.warn({ err }, 'gateway redis subscriber error'));
    this.subscriber.on('ready', () => this.onReady());
    this.subscriber.on('message', (channel: string, text: string) => this.onMessage(channel, text));
  }

  async start(): Promise<void> {
    await this.subscriber.subscribe(keys.invalidateChannel);
  }

  /** The warm feed of a station, subscribing and loading it for the first listener. */
  async acquire(stationId: string): Promise<StationFeed> {
    let sub = this.subscriptions.get(stationId);
    if (!sub) {
      const channel = keys.feedChannel(stationId);
      const feed = new StationFeed(stationId, this.store, (change) => this.events.change(stationId, change), this.logger);
      const views = new HeardViews(
        feed,
        this.store,
        (latencyMs, change) => this.events.delayedChange(stationId, latencyMs, change),
        this.logger,
      );
      const created: Subscription = { feed, views, refs: 0, ready: Promise.resolve(feed), warm: false, linger: null };
      created.ready = (async () => {
        await this.subscriber.subscribe(channel);
        await feed.load();
        created.warm = true;
        return feed;
      })();
      sub = created;
      this.subscriptions.set(stationId, created);
      if (metricsEnabled()) gatewayStations.inc();
      this.byChannel.set(channel, feed);
      created.ready.catch(() => {
        if (this.subscriptions.get(stationId) === created) this.drop(stationId, created);
      });
    }
    this.keep(sub);
    sub.refs++;
    try {
      return await sub.ready;
    } catch (err) {
      sub.refs--;
      throw err;
    }
  }

  /** Whether a station's feed is subscribed and loaded. */
  isWarm(stationId: string): boolean {
    return this.subscriptions.get(stationId)?.warm === true;
  }

  /** Counts a listener of a station whose feed is warm already; undefined when it has to be loaded. */
  acquireNow(stationId: string): StationFeed | undefined {
    const sub = this.subscriptions.get(stationId);
    if (!sub?.warm) return undefined;
    this.keep(sub);
    sub.refs++;
    return sub.feed;
  }

  /**
   * The delayed view of a station at `latencyMs` for a connection that holds the station already
   * (`acquire`), reading the station's recent history first when it is its first delayed connection.
   */
  acquireView(stationId: string, latencyMs: number): Promise<DelayedView> {
    const sub = this.subscriptions.get(stationId);
    if (!sub) return Promise.reject(new Error(`station ${stationId} is not held`));
    return sub.views.acquire(latencyMs);
  }

  /** `acquireView` without waiting; undefined when the station's history has to be read first. */
  acquireViewNow(stationId: string, latencyMs: number): DelayedView | undefined {
    return this.subscriptions.get(stationId)?.views.acquireNow(latencyMs);
  }

  /** Whether a station's delayed views can be had without waiting (its recent history is read). */
  viewsReady(stationId: string): boolean {
    return this.subscriptions.get(stationId)?.views.ready === true;
  }

  view(stationId: string, latencyMs: number): DelayedView | undefined {
    return this.subscriptions.get(stationId)?.views.view(latencyMs);
  }

  releaseView(stationId: string, latencyMs: number): void {
    this.subscriptions.get(stationId)?.views.release(latencyMs);
  }

  /** The warm feed of a station this gateway holds listeners for. */
  feed(stationId: string): StationFeed | undefined {
    return this.subscriptions.get(stationId)?.feed;
  }

  release(stationId: string): void {
    const sub = this.subscriptions.get(stationId);
    if (!sub) return;
    sub.refs--;
    if (sub.refs > 0) return;
    if (!sub.warm || this.closing) return this.drop(stationId, sub);
    sub.linger ??= setTimeout(() => {
      sub.linger = null;
      if (sub.refs <= 0 && this.subscriptions.get(stationId) === sub) this.drop(stationId, sub);
    }, LINGER_MS);
    sub.linger.unref();
  }

  private keep(sub: Subscription): void {
    if (sub.linger) clearTimeout(sub.linger);
    sub.linger = null;
  }

  /** Stations with listeners on this gateway. */
  stations(): string[] {
    return [...this.subscriptions.keys()];
  }

  async close(): Promise<void> {
    this.closing = true;
    for (const [stationId, sub] of this.subscriptions) this.drop(stationId, sub);
    await this.subscriber.quit().catch(() => this.subscriber.disconnect());
  }

  private drop(stationId: string, sub: Subscription): void {
    this.keep(sub);
    this.subscriptions.delete(stationId);
    if (metricsEnabled()) gatewayStations.dec();
    const channel = keys.feedChannel(stationId);
    this.byChannel.delete(channel);
    sub.views.close();
    sub.feed.close();
    if (!this.closing)
      this.subscriber
        .unsubscribe(channel)
        .catch((err: unknown) => this.logger.warn({ err, stationId }, 'could not unsubscribe feed channel'));
  }

  private onMessage(channel: string, text: string): void {
    if (channel === keys.invalidateChannel) {
      const sep = text.indexOf(':');
      const topic = text.slice(0, sep);
      // With read replicas a station's and a read's change carry the write's commit LSN (lib/replicas/routing.ts).
      const [id, lsn] = splitLsn(topic, text.slice(sep + 1));
      if (lsn !== undefined) this.store.heard(topic === 'reads' ? id.slice(0, id.lastIndexOf(':')) : id, lsn);
      if (topic === 'station') this.events.stationChanged(id);
      return;
    }
    const feed = this.byChannel.get(channel);
    if (!feed) return;
    let row: StoredRow | null = null;
    try {
      const message = JSON.parse(text) as Partial<FeedMessage> | null;
      if (typeof message?.lsn === 'string' && typeof message.stationId === 'string') this.store.heard(message.stationId, message.lsn);
      row = asRow(message);
    } catch {
      row = null;
    }
    if (row) feed.receive(row);
    else this.logger.warn({ channel }, 'ignored a malformed feed message');
  }

  private onReady(): void {
    if (!this.connectedBefore) {
      this.connectedBefore = true;
      return;
    }
    if (this.closing) return;
    void this.resubscribe();
  }

  private async resubscribe(): Promise<void> {
    try {
      await this.subscriber.subscribe(keys.invalidateChannel, ...this.byChannel.keys());
    } catch (err) {
      this.logger.warn({ err }, 'could not restore feed subscriptions');
      return; // the next reconnection tries again
    }
    this.logger.info({ stations: this.subscriptions.size }, 'feed subscriptions restored; catching up');
    // Feed messages (and the write positions they carry) may have been missed: with read replicas the
    // catch-up reads only a replica that has replayed everything the primary had by now.
    await this.store.catchUpFloor();
    this.events.resubscribed();
    if (metricsEnabled()) gatewayResyncs.labels('redis_reconnect').inc(this.subscriptions.size);
    for (const sub of this.subscriptions.values()) void sub.feed.catchUp();
  }
}
