import type { Redis } from './redis.ts';
import { isMemoryRedis } from './embedded/memoryRedis.ts';

// Token buckets for the rate limits (per credential, token bucket: docs/errors.md#rate-limits): a bucket holds
// `perMinute` tokens and refills continuously at `perMinute` tokens a minute, so a client that emptied
// it gets one request again after 60 000 / perMinute ms — not at the end of a fixed minute, and never
// twice the limit across a window edge.
//
// Kept as GCRA (the generic cell rate algorithm), the token bucket in one number: the "theoretical
// arrival time" (TAT) — the instant the bucket would be full again. A take moves it one interval on;
// it is refused when that would put it more than a whole bucket ahead of now. One Redis key per bucket,
// one atomic script per take, on Redis' clock (web nodes' clocks may differ). rate-limiter-flexible,
// used before, has no token bucket on Redis (its Redis limiters count fixed windows); libraries that do
// are unmaintained, and the algorithm is the dozen lines below.

export interface Take {
  allowed: boolean;
  /** Whole tokens left after this take. */
  remaining: number;
  /** When refused: ms until one token is back. 0 when allowed. */
  retryAfterMs: number;
  /** Ms until the bucket is full again. */
  fullInMs: number;
}

/**
 * What `ahead` may exceed the capacity by and still be allowed: at Unix-ms magnitudes (~1.8e12) a double's
 * step is ~0.0002 ms, so `now + interval - now` is not exactly a fractional `interval` (60 000 / 360), and
 * the stored TAT is rounded to 0.001 ms. A smaller slack made a bucket of one refuse every take.
 */
const SLACK_MS = 0.002;

/**
 * One step of GCRA. `tat` and `now` in ms; returns the new TAT, or null when the take is refused.
 * The bucket holds `burst` tokens (a minute's worth unless given; 1 = requests at least one interval apart).
 */
export function gcra(tat: number | null, now: number, perMinute: number, burst = perMinute): { take: Take; tat: number | null } {
  const interval = 60_000 / perMinute;
  const capacity = interval * burst;
  const start = tat === null || tat < now ? now : tat;
  const ahead = start + interval - now;
  if (ahead > capacity + SLACK_MS) {
    return { take: { allowed: false, remaining: 0, retryAfterMs: ahead - capacity, fullInMs: start - now }, tat: null };
  }
  return {
    take: { allowed: true, remaining: Math.floor(Math.max(0, capacity - ahead) / interval + 1e-9), retryAfterMs: 0, fullInMs: ahead },
    tat: start + interval,
  };
}

// The same step in Redis. Times in ms with fractions (an interval of 60 000 / 7 ms is not whole); the
// TAT is stored with three decimals, formatted so that Lua never writes it in exponent notation.
const TAKE_SCRIPT = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + tonumber(t[2]) / 1000
local interval = 60000 / tonumber(ARGV[1])
local capacity = interval * tonumber(ARGV[2])
local stored = redis.call('GET', KEYS[1])
local start = now
if stored then
  local tat = tonumber(stored)
  if tat > now then start = tat end
end
local ahead = start + interval - now
if ahead > capacity + ${SLACK_MS} then
  return {0, tostring(ahead - capacity), tostring(start - now)}
end
redis.call('SET', KEYS[1], string.format('%.3f', start + interval), 'PX', math.ceil(ahead))
return {1, tostring(math.max(0, capacity - ahead)), tostring(ahead)}
`;

// Whether a take would be refused now, without taking: the ms until a token is back, or 0.
const EMPTY_FOR_SCRIPT = `
local stored = redis.call('GET', KEYS[1])
if not stored then return '0' end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + tonumber(t[2]) / 1000
local interval = 60000 / tonumber(ARGV[1])
local tat = tonumber(stored)
local start = now
if tat > now then start = tat end
local ahead = start + interval - now
if ahead > interval * tonumber(ARGV[2]) + ${SLACK_MS} then return tostring(ahead - interval * tonumber(ARGV[2])) end
return '0'
`;

type EmptyForCommand = (key: string, perMinute: number, burst: number) => Promise<string>;

type TakeCommand = (key: string, perMinute: number, burst: number) => Promise<[number, string, string]>;

/** Buckets in Redis; in this process' memory while Redis cannot answer (a Redis outage never fails a request). */
export class TokenBuckets {
  private readonly redis: Redis & { wavelineTakeToken?: TakeCommand; wavelineBucketEmptyFor?: EmptyForCommand };
  private readonly prefix: string;
  private readonly fallback = new Map<string, number>();
  /** Without Redis (the embedded default) the buckets live in this process, the only one. */
  private readonly inProcess: boolean;
  constructor(redis: Redis, prefix: string) {
    this.redis = redis;
    this.prefix = prefix;
    this.inProcess = isMemoryRedis(redis);
    if (!this.redis.wavelineTakeToken) redis.defineCommand('wavelineTakeToken', { numberOfKeys: 1, lua: TAKE_SCRIPT });
    if (!this.redis.wavelineBucketEmptyFor) redis.defineCommand('wavelineBucketEmptyFor', { numberOfKeys: 1, lua: EMPTY_FOR_SCRIPT });
  }

  /** Ms until the bucket has a token again when it is empty now, else 0; takes nothing. */
  async emptyFor(key: string, perMinute: number, burst = perMinute): Promise<number> {
    const inMemory = (): number => {
      const tat = this.fallback.get(key);
      return tat === undefined ? 0 : gcra(tat, Date.now(), perMinute, burst).take.retryAfterMs;
    };
    if (this.inProcess) return inMemory();
    try {
      return Number(await (this.redis.wavelineBucketEmptyFor as EmptyForCommand)(`${this.prefix}:${key}`, perMinute, burst));
    } catch {
      return inMemory();
    }
  }

  /** Takes a token; `burst` is how many the bucket holds (default: a minute's worth). */
  async take(key: string, perMinute: number, burst = perMinute): Promise<Take> {
    if (this.inProcess) return this.takeInMemory(key, perMinute, burst);
    let answer: [number, string, string];
    try {
      answer = await (this.redis.wavelineTakeToken as TakeCommand)(`${this.prefix}:${key}`, perMinute, burst);
    } catch {
      return this.takeInMemory(key, perMinute, burst);
    }
    const [allowed, a, b] = [answer[0] === 1, Number(answer[1]), Number(answer[2])];
    const interval = 60_000 / perMinute;
    return allowed
      ? { allowed, remaining: Math.floor(a / interval + 1e-9), retryAfterMs: 0, fullInMs: b }
      : { allowed, remaining: 0, retryAfterMs: a, fullInMs: b };
  }

  private takeInMemory(key: string, perMinute: number, burst: number): Take {
    const now = Date.now();
    const { take, tat } = gcra(this.fallback.get(key) ?? null, now, perMinute, burst);
    if (tat !== null) {
      if (this.fallback.size >= 100_000) this.fallback.clear();
      this.fallback.set(key, tat);
    }
    return take;
  }
}
