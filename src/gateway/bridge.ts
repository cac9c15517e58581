import { randomBytes } from 'node:crypto';
import type { FeedMessage } from '../feed/bus.ts';
import { FEED_KINDS } from '../feed/names.ts';
import { parseChange } from '../lib/invalidation.ts';
import { keys } from '../lib/keys.ts';
import type { RedisTarget } from '../config.ts';
import { createBlockingRedis, createCluster, type Cluster, type Redis } from '../lib/redis.ts';
import { keySlot } from '../lib/slot.ts';
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

/**
 * On a Redis Cluster: how soon the bridge checks its station channels again while one is not confirmed on
 * its slot's owner (a (re)subscription in flight or failed, or the client not ready). With every channel
 * confirmed no timer runs: the checks follow the client's events (docs/operations.md#reshards-and-failovers).
 */
const SHARD_RETRY_MS = 250;

/**
 * On a Redis Cluster: after a sign that a station channel's slot changed owner (an unsolicited SUNSUBSCRIBE,
 * a lost node), the slot map is read again this long after. ioredis reads it at once, from a random node,
 * which may not know the new owner yet (other nodes learn it by gossip within about a second).
 */
const CONFIRM_READS_MS = [500, 2000];

/**
 * On a Redis Cluster: how often the bridge's client re-reads the slot map with no sign of a change (ioredis'
 * own default), for a server that keeps a moved slot's subscriptions without a SUNSUBSCRIBE (early 7.0).
 * Each read costs a new connection and two copies of the 16 384-slot map (ioredis' sharded subscribers
 * compare them as JSON): at every second it was the larger part of an idle gateway's CPU.
 */
const SLOTS_BACKSTOP_MS = 5000;

/** A station channel's sharded subscription on the cluster: the master it was confirmed on, null when lost. */
interface ShardHold {
  slot: number;
  node: string | null;
  /** A (re)subscription in flight. */
  pending: boolean;
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
  /** On a Redis Cluster: the client (its sharded subscribers hold the station channels), else null. */
  private readonly cluster: Cluster | null;
  /** On a Redis Cluster: each held station channel's subscription (docs/operations.md#reshards-and-failovers). */
  private readonly shards = new Map<string, ShardHold>();
  /** The next check of the station channels, while one is not confirmed on its slot's owner. */
  private retryTimer: NodeJS.Timeout | null = null;
  /** Pending re-reads of the slot map after a sign of a change. */
  private readonly confirmTimers = new Set<NodeJS.Timeout>();

  constructor(target: RedisTarget, store: FeedStore, events: BridgeEvents, logger: Logger, options: BridgeOptions = {}) {
    this.store = store;
    this.events = events;
    this.logger = logger;
    const delay = options.reconnectDelayMs;
    if (target.kind === 'cluster') {
      // One connection per master for the sharded channels (ioredis' sharded subscribers: a station's
      // SSUBSCRIBE goes to the master owning its slot), one for the classic invalidation channel.
      this.cluster = createCluster(
        target.seeds,
        { connectionName: this.clientName, maxRetriesPerRequest: null },
        {
          shardedSubscribers: true,
          slotsRefreshInterval: SLOTS_BACKSTOP_MS,
          clusterRetryStrategy: (times) => delay ?? Math.min(times * 100, 2000),
        },
      );
      this.subscriber = this.cluster as unknown as Redis;
      this.watchShards(this.cluster);
    } else {
      this.cluster = null;
      this.subscriber = createBlockingRedis(target, {
        connectionName: this.clientName,
        autoResubscribe: false,
        maxRetriesPerRequest: null,
        retryStrategy: (times) => delay ?? Math.min(times * 100, 2000),
      });
      this.subscriber.on('ready', () => this.onReady());
    }
    this.subscriber.on('error', (err) => logger.warn({ err }, 'gateway redis subscriber error'));
    this.subscriber.on('message', (channel: string, text: string) => this.onMessage(channel, text));
    this.subscriber.on('smessage', (channel: string, text: string) => this.onMessage(channel, text));
  }

  async start(): Promise<void> {
    await this.subscriber.subscribe(keys.invalidateChannel);
  }

  /** Subscribes a station's channel: SSUBSCRIBE on the master owning it (cluster), else SUBSCRIBE. */
  private async subscribeChannel(channel: string): Promise<void> {
    if (!this.cluster) {
      await this.subscriber.subscribe(channel);
      return;
    }
    const hold: ShardHold = { slot: keySlot(channel), node: null, pending: true };
    this.shards.set(channel, hold);
    try {
      await this.shardSubscribe(channel, hold);
    } catch (err) {
      if (this.shards.get(channel) === hold) this.shards.delete(channel);
      throw err;
    }
  }

  private async shardSubscribe(channel: string, hold: ShardHold): Promise<void> {
    const cluster = this.cluster as Cluster;
    hold.pending = true;
    try {
      // The owner as the client's slot map has it when the command leaves: ioredis sends it there.
      const owner = cluster.slots[hold.slot]?.[0] ?? null;
      await cluster.ssubscribe(channel);
      hold.node = owner;
    } finally {
      hold.pending = false;
    }
  }

  private unsubscribeChannel(channel: string): Promise<unknown> {
    if (!this.cluster) return this.subscriber.unsubscribe(channel);
    this.shards.delete(channel);
    return this.cluster.sunsubscribe(channel);
  }

  /**
   * On a Redis Cluster a station's subscription can be lost without the connection closing: a slot moved
   * to another master (the old one drops its channels: an unsolicited SUNSUBSCRIBE), a failover (a
   * replica promoted), a master killed. ioredis' sharded subscribers re-subscribe by themselves after it
   * re-reads the slot map, but do not say when the SSUBSCRIBE is answered, and the catch-up read must
   * start only then (or a change published in between would be missed). So the bridge keeps, per
   * channel, the master its SSUBSCRIBE was confirmed on, and whenever that is no longer the slot's owner
   * or the node's connection went away, it subscribes again on the owner and then catches the station up
   * from Postgres by sequence, as after a reconnection: no change missed, none twice.
   *
   * The checks follow the client's events, with no timer while every channel is confirmed: each new slot
   * map ('refresh': after an unsolicited SUNSUBSCRIBE, a MOVED, a lost node, or the backstop read), the
   * sharded subscribers re-made, a lost node. An unsolicited SUNSUBSCRIBE or a lost node also re-reads the
   * slot map twice more shortly after (CONFIRM_READS_MS), for when the first read came from a node that
   * did not know the new owner yet.
   */
  private watchShards(cluster: Cluster): void {
    const check = () => this.audit();
    cluster.on('refresh', check);
    cluster.on('subscribersReady', check);
    cluster.on('-node', (_redis: unknown, nodeKey: string) => {
      for (const hold of this.shards.values()) if (hold.node === nodeKey) hold.node = null;
      // The classic subscription (invalidations) may have been on it too: anything may have been missed.
      this.events.resubscribed();
      this.audit();
      this.confirmSlots();
    });
    // ioredis signals an unsolicited SUNSUBSCRIBE (and a MOVED answer to SSUBSCRIBE) only on its sharded
    // subscribers' own emitter, which it does not type; without it the backstop read still finds the owner.
    const subscribers = (cluster as unknown as { subscriberGroupEmitter?: NodeJS.EventEmitter }).subscriberGroupEmitter;
    subscribers?.on('moved', () => this.confirmSlots());
  }

  /** Re-reads the slot map CONFIRM_READS_MS after a sign of a change (once per burst of signs). */
  private confirmSlots(): void {
    const cluster = this.cluster;
    if (!cluster || this.closing || this.confirmTimers.size > 0) return;
    for (const ms of CONFIRM_READS_MS) {
      const timer: NodeJS.Timeout = setTimeout(() => {
        this.confirmTimers.delete(timer);
        if (!this.closing) cluster.refreshSlotsCache();
      }, ms);
      timer.unref();
      this.confirmTimers.add(timer);
    }
  }

  /** Checks the station channels again in SHARD_RETRY_MS (one pending check at a time). */
  private retryAudit(): void {
    if (this.retryTimer || this.closing) return;
    this.retryTimer = setTimeout(() => {
      this.retryTimer = null;
      this.audit();
    }, SHARD_RETRY_MS);
    this.retryTimer.unref();
  }

  private audit(): void {
    const cluster = this.cluster;
    if (!cluster || this.closing || this.shards.size === 0) return;
    if (cluster.status !== 'ready') return this.retryAudit();
    let unsettled = false;
    for (const [channel, hold] of this.shards) {
      if (hold.pending) {
        // Its answer may confirm it on a master that lost the slot meanwhile: check again after it.
        unsettled = true;
        continue;
      }
      const owner = cluster.slots[hold.slot]?.[0];
      if (!owner) unsettled = true;
      if (!owner || hold.node === owner) continue;
      unsettled = true;
      hold.node = null;
      const feed = this.byChannel.get(channel);
      this.shardSubscribe(channel, hold).then(
        () => {
          // A station still loading reads its rows after this anyway.
          if (this.shards.get(channel) !== hold || !feed || !this.subscriptions.get(feed.stationId)?.warm) return;
          this.logger.info({ channel, node: hold.node }, 'station channel subscribed again on its master; catching up');
          if (metricsEnabled()) gatewayResyncs.labels('redis_reconnect').inc();
          // Feed messages (and the write positions they carry) may have been missed meanwhile: with read
          // replicas the catch-up reads only a replica that has replayed everything the primary had by now.
          void this.store.catchUpFloor().then(() => feed.catchUp());
        },
        (err: unknown) => this.logger.warn({ err, channel }, 'could not subscribe a station channel again; retrying'),
      );
    }
    if (unsettled) this.retryAudit();
  }

  /** On a Redis Cluster: each held station channel, its slot and the master it is subscribed on (null: being restored). */
  shardSubscriptions(): Array<{ channel: string; slot: number; node: string | null }> {
    return [...this.shards].map(([channel, hold]) => ({ channel, slot: hold.slot, node: hold.node }));
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
        await this.subscribeChannel(channel);
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
    if (this.retryTimer) clearTimeout(this.retryTimer);
    for (const timer of this.confirmTimers) clearTimeout(timer);
    this.confirmTimers.clear();
    for (const [stationId, sub] of this.subscriptions) this.drop(stationId, sub);
    this.shards.clear();
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
      this.unsubscribeChannel(channel).catch((err: unknown) => this.logger.warn({ err, stationId }, 'could not unsubscribe feed channel'));
  }

  private onMessage(channel: string, text: string): void {
    if (channel === keys.invalidateChannel) {
      // With read replicas a station's and a read's change carry the write's commit LSN (lib/replicas/routing.ts).
      const { topic, id, lsn } = parseChange(text);
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
