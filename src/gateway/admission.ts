import type * as uWS from 'uWebSockets.js';
import type { Config } from '../config.ts';
import { stationChannel } from '../feed/names.ts';
import { TtlCache } from '../lib/cache.ts';
import { forwardedClient } from '../lib/clientIp.ts';
import { keys } from '../lib/keys.ts';
import type { Logger } from '../lib/logger.ts';
import { createRedis, type Redis } from '../lib/redis.ts';
import { TokenBuckets } from '../lib/tokenBucket.ts';
import type { FeedErrorCode } from './frames.ts';
import type { FeedStore } from './store.ts';

// Who may open a feed connection: channel syntax, the station gate (active, public-online, realtime on),
// connections per client IP on this node and connection attempts per client IP across nodes.

/** Why a connection is refused: sent as the `error` message, then the socket closes with `closeCode`. */
export interface Rejection {
  code: FeedErrorCode;
  message: string;
  closeCode: number;
}

/** Policy violation (RFC 6455): every refusal a client caused. */
export const CLOSE_POLICY = 1008;
/** The gateway could not read what it needs; the client should retry with backoff. */
export const CLOSE_INTERNAL = 1011;

/** Channels one connection may ask for (a page rarely shows more than a few stations). */
export const MAX_CHANNELS = 10;
/** Station ids: generated `st_…` ids or operator-supplied ones (docs/stations.md#names-and-ids). */
const CHANNEL = /^stations\.([A-Za-z0-9_-]{1,80})\.feed$/;
/** How long a station's gate is cached; admin changes drop it at once through invalidation. */
const GATE_TTL_MS = 10_000;

const reject = (code: FeedErrorCode, message: string, closeCode = CLOSE_POLICY): Rejection => ({ code, message, closeCode });

/** The gateway could not read what a connection needs (Postgres unreachable): retry with backoff. */
export const UNAVAILABLE: Rejection = reject(
  'PROVIDER_UNAVAILABLE',
  'The feed is temporarily unavailable; reconnect later.',
  CLOSE_INTERNAL,
);

/** A stream key (docs/now-playing.md#heard-time-answers-in-the-listeners-time). */
const STREAM_KEY = /^[a-z0-9][a-z0-9-]{0,31}$/;

/** The `stream` query parameter: null when absent (every row live), or why it cannot be served. */
export function parseStream(query: string): string | null | Rejection {
  const stream = new URLSearchParams(query).get('stream');
  if (stream === null) return null;
  if (!STREAM_KEY.test(stream))
    return reject(
      'VALIDATION_ERROR',
      `Invalid stream "${stream.slice(0, 40)}"; stream keys look like mp3 or hls-main ([a-z0-9-], up to 32).`,
    );
  return stream;
}

/** Station ids from the repeated `channels[]` query parameter, or why they cannot be served. */
export function parseChannels(query: string): { stationIds: string[] } | Rejection {
  const channels = new URLSearchParams(query).getAll('channels[]');
  if (channels.length === 0) return reject('VALIDATION_ERROR', 'Pass at least one channel as channels[]=stations.{stationId}.feed.');
  const stationIds: string[] = [];
  for (const channel of new Set(channels)) {
    const match = CHANNEL.exec(channel);
    if (!match)
      return reject('VALIDATION_ERROR', `Unknown channel "${channel.slice(0, 120)}"; channels look like stations.{stationId}.feed.`);
    stationIds.push(match[1]);
  }
  if (stationIds.length > MAX_CHANNELS) return reject('VALIDATION_ERROR', `At most ${MAX_CHANNELS} channels per connection.`);
  return { stationIds };
}

/**
 * Splits the `lastEventId` parameter (a resume cursor) off a feed URL's query: the rest is what admission
 * reads and caches by (many listeners share it), the cursor is the connection's own.
 */
export function splitCursor(query: string): { query: string; lastEventId: string | null } {
  let at = query.startsWith('lastEventId=') ? 0 : query.indexOf('&lastEventId=');
  if (at < 0) return { query, lastEventId: null };
  if (at > 0) at++;
  // A reconnect storm brings thousands of these: cut the parameter out rather than parse the whole query.
  const end = query.indexOf('&', at);
  const raw = query.slice(at + 'lastEventId='.length, end < 0 ? query.length : end);
  const rest = end < 0 ? query.slice(0, Math.max(0, at - 1)) : query.slice(0, at) + query.slice(end + 1);
  // A cursor this gateway wrote needs no decoding ([A-Za-z0-9._~-]).
  let lastEventId = raw;
  if (raw.includes('%') || raw.includes('+'))
    try {
      lastEventId = decodeURIComponent(raw.replace(/\+/g, ' '));
    } catch {
      // not a cursor this gateway wrote: a reset, never an error
    }
  return { query: splitCursor(rest).query, lastEventId }; // a repeated parameter: the first one counts
}

/**
 * The client's IP of an upgrade or SSE request: the X-Forwarded-For entry written by the nearest trusted
 * proxy, else the socket's address — read only then, and in binary (uWS's text form costs an snprintf).
 */
export function requestIp(res: uWS.HttpResponse, req: uWS.HttpRequest, trustedProxyHops: number): string {
  return forwardedClient(req.getHeader('x-forwarded-for'), trustedProxyHops) ?? socketAddress(res.getRemoteAddress());
}

/** A socket address as `clientIp` writes it: IPv4 (also IPv4-mapped IPv6) dotted, IPv6 as uWS's text (8 groups of 4 hex digits). */
export function socketAddress(address: ArrayBuffer): string {
  const b = new Uint8Array(address);
  if (b.length === 4) return `${b[0]}.${b[1]}.${b[2]}.${b[3]}`;
  let mapped = b.length === 16 && b[10] === 0xff && b[11] === 0xff;
  for (let i = 0; mapped && i < 10; i++) mapped = b[i] === 0;
  if (mapped) return `${b[12]}.${b[13]}.${b[14]}.${b[15]}`;
  const hex = Buffer.from(b.buffer, b.byteOffset, b.length).toString('hex');
  const groups: string[] = [];
  for (let i = 0; i < hex.length; i += 4) groups.push(hex.slice(i, i + 4));
  return groups.join(':');
}

/** The client's IP: the socket address, or the X-Forwarded-For entry written by the nearest trusted proxy. */
export function clientIp(socketAddress: string, forwardedFor: string, trustedProxyHops: number): string {
  const forwarded = forwardedClient(forwardedFor, trustedProxyHops);
  if (forwarded) return forwarded;
  // uWS writes IPv4 peers as IPv4-mapped IPv6 in full hex form.
  const mapped = /^(?:0000:){5}ffff:([0-9a-f]{4}):([0-9a-f]{4})$/i.exec(socketAddress);
  if (!mapped) return socketAddress;
  const hi = parseInt(mapped[1], 16);
  const lo = parseInt(mapped[2], 16);
  return `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`;
}

interface GateEntry {
  verdict: Promise<Rejection | null>;
  /** The settled verdict, so a cached station is admitted without waiting; with the station's streams. */
  settled?: { rejection: Rejection | null; streams: ReadonlyMap<string, number> };
}

/** Parsed channel lists by query string: thousands of listeners of a station share one array. */
const PARSED_CACHE_SIZE = 1000;

export class Admission {
  private readonly gates = new TtlCache<string, GateEntry>(GATE_TTL_MS, 10_000);
  private readonly parsed = new Map<string, readonly string[]>();
  private readonly streamsParsed = new Map<string, string | null | Rejection>();
  /** Each station's streams as its last settled gate read them (kept past the gate's TTL for admissions in flight). */
  private readonly streamsOf = new Map<string, ReadonlyMap<string, number>>();
  private readonly connectionsByIp = new Map<string, { ip: string; count: number }>();
  private readonly store: FeedStore;
  private readonly maxPerIp: number;
  private readonly attempts: { buckets: TokenBuckets; perMinute: number } | null;
  private readonly redis: Redis | null;

  constructor(config: Readonly<Config>, store: FeedStore, logger: Logger) {
    this.store = store;
    this.maxPerIp = config.gateway.maxConnectionsPerIp;
    const points = config.rateLimits.anonymous;
    if (points > 0) {
      const redis = createRedis(config.redis);
      redis.on('error', (err) => logger.warn({ err }, 'gateway redis connection error'));
      this.redis = redis;
      // Token buckets shared across gateway nodes in Redis; in memory while Redis is unreachable.
      this.attempts = { buckets: new TokenBuckets(redis, keys.feedConnectRateLimitPrefix), perMinute: points };
    } else {
      this.redis = null;
      this.attempts = null;
    }
  }

  /** Whether connection attempts are counted (then every admission waits for Redis). */
  get limitsAttempts(): boolean {
    return this.attempts !== null;
  }

  /** Takes one connection attempt from the client IP's bucket. */
  async takeAttempt(ip: string): Promise<Rejection | null> {
    if (!this.attempts) return null;
    const take = await this.attempts.buckets.take(ip, this.attempts.perMinute);
    if (take.allowed) return null;
    const retryAfter = Math.max(1, Math.ceil(take.retryAfterMs / 1000));
    return reject('RATE_LIMITED', `Too many connection attempts; retry in ${retryAfter} s.`);
  }

  /** `parseChannels`, remembered per query string. */
  channels(query: string): readonly string[] | Rejection {
    const hit = this.parsed.get(query);
    if (hit) return hit;
    const parsed = parseChannels(query);
    if ('code' in parsed) return parsed;
    if (this.parsed.size >= PARSED_CACHE_SIZE) this.parsed.clear();
    const stationIds = Object.freeze(parsed.stationIds);
    this.parsed.set(query, stationIds);
    return stationIds;
  }

  /** `parseStream`, remembered per query string. */
  stream(query: string): string | null | Rejection {
    let stream = this.streamsParsed.get(query);
    if (stream === undefined) {
      if (this.streamsParsed.size >= PARSED_CACHE_SIZE) this.streamsParsed.clear();
      stream = parseStream(query);
      this.streamsParsed.set(query, stream);
    }
    return stream;
  }

  /**
   * The latency (ms) of `stream` at each station, from their settled gates (call once every gate is
   * known): null when there is no stream or it is live everywhere; an unknown key is refused like a bad
   * channel, naming the station's keys.
   */
  latencies(stationIds: readonly string[], stream: string | null): readonly number[] | null | Rejection {
    if (stream === null) return null;
    const latencies: number[] = [];
    for (const stationId of stationIds) {
      const streams = this.streamsOf.get(stationId);
      const latency = streams?.get(stream);
      if (latency === undefined) {
        const known = [...(streams?.keys() ?? [])].join(', ') || 'none';
        return reject('VALIDATION_ERROR', `Unknown stream "${stream}" for channel ${stationChannel(stationId)}; its streams: ${known}.`);
      }
      latencies.push(latency);
    }
    return latencies.every((latency) => latency === 0) ? null : latencies;
  }

  /**
   * Counts a connection against its IP; returns the IP (one string shared by all its connections), or a
   * refusal when the IP holds the maximum already.
   */
  reserveConnection(ip: string): string | Rejection {
    const held = this.connectionsByIp.get(ip);
    if (!held) {
      this.connectionsByIp.set(ip, { ip, count: 1 });
      return ip;
    }
    if (held.count >= this.maxPerIp)
      return reject('RATE_LIMITED', `Too many open feed connections from one address (at most ${this.maxPerIp}).`);
    held.count++;
    return held.ip;
  }

  releaseConnection(ip: string): void {
    const held = this.connectionsByIp.get(ip);
    if (!held) return;
    if (--held.count <= 0) this.connectionsByIp.delete(ip);
  }

  /** Unknown, inactive or public-offline → NOT_FOUND; realtime switched off → MODULE_DISABLED. */
  gate(stationId: string): Promise<Rejection | null> {
    const hit = this.gates.get(stationId);
    if (hit) return hit.verdict;
    const entry: GateEntry = {
      verdict: this.store.stationGate(stationId).then((gate) => {
        let rejection: Rejection | null = null;
        if (!gate || !gate.active || !gate.publicOnline)
          rejection = reject('NOT_FOUND', `No public station for channel ${stationChannel(stationId)}.`);
        else if (!gate.realtime) rejection = reject('MODULE_DISABLED', 'The realtime module is switched off for this station.');
        entry.settled = { rejection, streams: gate?.streams ?? new Map() };
        if (this.streamsOf.size >= 10_000) this.streamsOf.clear();
        this.streamsOf.set(stationId, entry.settled.streams);
        return rejection;
      }),
    };
    this.gates.set(stationId, entry);
    entry.verdict.catch(() => {
      if (this.gates.get(stationId) === entry) this.gates.delete(stationId);
    });
    return entry.verdict;
  }

  /** The cached verdict when it is already known, else undefined. */
  gateNow(stationId: string): { rejection: Rejection | null } | undefined {
    return this.gates.get(stationId)?.settled;
  }

  forget(stationId: string): void {
    this.gates.delete(stationId);
  }

  forgetAll(): void {
    this.gates.clear();
  }

  async close(): Promise<void> {
    await this.redis?.quit().catch(() => this.redis?.disconnect());
  }
}
