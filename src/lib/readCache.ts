import type { Invalidation } from './invalidation.ts';
import type { ReadRouting } from './replicas/routing.ts';
import { cacheLookup } from './metrics.ts';
import { strongEtag } from './strongEtag.ts';

/**
 * What a listener read shows, by the data it is computed from. A write invalidates the areas it
 * changes (`svc.invalidation.invalidate('reads', readsTopic(stationId, area))`); a change of the
 * station itself (the `station` topic) drops every area of that station — `station`, the station
 * document, has no other invalidation.
 */
export const READ_AREAS = ['station', 'content', 'schedule', 'nowPlaying', 'weather', 'traffic'] as const;
export type ReadArea = (typeof READ_AREAS)[number];

/**
 * The key of a cached answer: the REST route's operationId, the station, the raw path when the route
 * names more than the station, and the raw query string. GraphQL resolvers build the same key for the
 * same read, so both surfaces share one answer.
 */
export const readKey = (operationId: string, stationId: string, path = '', query = ''): string =>
  `${operationId}\n${stationId}\n${path}\n${query}`;

/**
 * The key of a whole GraphQL response (graphql/serve.ts): the method, the Accept and Content-Type
 * headers the answer was negotiated with, and the raw query string (GET) or body (POST). Web's cached
 * reads (http/cachedReads.ts) find a GET's answer by the same key before Koa.
 */
export const graphqlKey = (method: string, stationId: string, accept: string, contentType: string, payload: string): string =>
  readKey(`graphql${method}`, stationId, `${accept}\n${contentType}`, payload);

/**
 * What a read's answer shows: one area, or several (`live` shows now-playing and the schedule; a
 * GraphQL answer may show any): an invalidation of any of them drops it.
 */
export type ReadAreas = ReadArea | readonly ReadArea[];

/** The metrics label of a look-up (a fixed name per read, never a key). */
export const areasLabel = (areas: ReadAreas): string => (typeof areas === 'string' ? areas : areas.join('+'));

/** The id of a `reads` invalidation: `<stationId>:<area>`. */
export const readsTopic = (stationId: string, area: ReadArea): string => `${stationId}:${area}`;

/**
 * A response of a computation registered with `ReadCache.begin` that is not kept (an error's answer): it
 * is given to the requests that waited for that computation, which send it as it is rather than run
 * again: the same request at the same moment gets the same answer, and a database outage costs one trip
 * to the pool, not one per waiting request (a read answers 503 within 2 s: docs/errors.md#postgres-unreachable).
 */
export class UnkeptAnswer extends Error {
  readonly status: number;
  readonly bytes: Buffer;
  readonly contentType: string;
  /** Its `Retry-After`, when it has one (a 503). */
  readonly retryAfter: string | undefined;
  constructor(status: number, bytes: Buffer, contentType: string, retryAfter: string | undefined) {
    super('the computation joined answered with a response that is not kept');
    this.status = status;
    this.bytes = bytes;
    this.contentType = contentType;
    this.retryAfter = retryAfter;
  }
}

/**
 * One answer of a listener read as it is sent: the bytes, their strong ETag (hashed once), the media
 * type, and the instant (ms since the epoch, by the service clock) until which the bytes stay exact —
 * the next whole second of an age, the next broadcast boundary, local midnight; `Infinity` when only a
 * write can change them. `value` is the JS object the bytes were serialised from, for GraphQL.
 */
export class Representation {
  readonly bytes: Buffer;
  readonly contentType: string;
  readonly validUntil: number;
  readonly etag: string;
  readonly value: unknown;
  /**
   * The same answer at a later instant `nowMs`, derived from what this one was computed from without
   * reading anything again, or undefined when only a new computation can tell. Set by reads whose data
   * stays right until a write of their area drops them while their bytes move with time (now-playing's
   * age and elapsed time): when this one expires, the cache keeps the derived one in its place
   * (`ReadCache.peek`) instead of running the read again each second.
   */
  later: ((nowMs: number) => Representation | undefined) | undefined = undefined;
  /**
   * Where the data it shows stands in its area's order of writes, when the read can tell (now-playing:
   * its observation's play time and receipt): compared element by element. The cache remembers the
   * greatest version it stored per station and area, so a seeded answer (`ReadCache.seed`) that shows
   * less is never put in place of one that showed more.
   */
  version: readonly number[] | undefined = undefined;
  constructor(bytes: Buffer, contentType: string, validUntil = Infinity, value?: unknown) {
    this.bytes = bytes;
    this.contentType = contentType;
    this.validUntil = validUntil;
    this.etag = strongEtag(bytes);
    this.value = value;
  }

  static json(value: unknown, validUntil = Infinity): Representation {
    return new Representation(Buffer.from(JSON.stringify(value)), JSON_TYPE, validUntil, value);
  }

  /** This answer with `later` set (see there). */
  derivesLater(later: (nowMs: number) => Representation | undefined): this {
    this.later = later;
    return this;
  }

  /** This answer with `version` set (see there). */
  at(version: readonly number[]): this {
    this.version = version;
    return this;
  }
}

export const JSON_TYPE = 'application/json; charset=utf-8';

/**
 * What a computation read its data at: `lsn` is set by a read that ran on a replica (the replay position
 * it had reached, lib/replicas/routing.ts); undefined, it read the primary.
 */
export interface ReadBasis {
  lsn: bigint | undefined;
}

interface Entry {
  rep: Representation;
  stationId: string;
  /** The areas whose invalidation drops it (a GraphQL answer may show several; none: only a station change). */
  areas: readonly ReadArea[];
  /** `validUntil`, by the service clock. */
  expires: number;
  /** Real time (Date.now) after which the entry goes whatever the service clock says: bounds a lost invalidation. */
  hardExpiry: number;
  size: number;
  /** Read since the eviction hand last passed (second chance). */
  used: boolean;
  /** Real time of its last hit (0: never read from the cache). */
  readAt: number;
  /** Computes it again with the inputs it was computed from (routes with `refreshAhead`), else undefined. */
  refresh: Refresh | undefined;
}

/**
 * Computes an answer again, without a request: what `read` would compute, stored the same way, as read
 * from the cache at `readAt` (the answer it replaces was: a refreshed answer stays as hot as that one).
 */
export type Refresh = (readAt: number, seed?: string) => unknown;

/** `a` comes after `b` in their area's order of writes (element by element; a missing `b` is before anything). */
export function laterVersion(a: readonly number[], b: readonly number[] | undefined): boolean {
  if (b === undefined) return true;
  for (let i = 0; i < Math.max(a.length, b.length); i++) {
    const x = a[i] ?? -Infinity;
    const y = b[i] ?? -Infinity;
    if (x !== y) return x > y;
  }
  return false;
}

/**
 * Whether an answer showing `version` may stand where `known` was the greatest version stored: it shows
 * more, or as much as only a seed has shown (a computation settles a seed's version; the same seed
 * heard again — the writing process hears its own change from the bus too — may come back).
 */
function showsAsMuch(version: readonly number[], known: { version: readonly number[]; seeded: boolean } | undefined): boolean {
  return laterVersion(version, known?.version) || (known?.seeded === true && !laterVersion(known.version, version));
}

/**
 * An answer read from the cache within this long before a write drops it is computed again at once
 * (refresh-ahead): the apps polling it ask again within seconds, and their first reads then find the
 * new answer, or its computation under way, instead of starting it.
 */
export const REFRESH_AHEAD_WINDOW_MS = 10_000;

/** Bookkeeping per entry besides its bytes (key, map slots, objects): an estimate for the budget. */
const ENTRY_OVERHEAD = 256;

/**
 * The listener reads' answers, in memory, bounded by a byte budget (`READ_CACHE_MAX_BYTES`).
 *
 * Eviction is second-chance (CLOCK) over insertion order: a hit only sets a flag, so the hot path
 * never reorders the map; when the budget is exceeded the oldest entries go, those read since the
 * last pass are moved to the back once. An answer larger than an eighth of the budget is served but
 * not kept, so one huge page cannot flush everything else.
 *
 * Consistency: a computation takes the area's generation before it reads the database and stores its
 * answer only if no invalidation of that area came in meanwhile, so an answer computed from data a
 * concurrent write replaced is never kept. Concurrent misses of one key share one computation.
 * With read replicas, an answer read on a replica at an LSN older than a write since heard for its
 * station is not kept either (`ReadRouting.keeps`), whether or not that write's area is the answer's.
 */
export class ReadCache {
  private readonly entries = new Map<string, Entry>();
  private readonly pending = new Map<string, { generation: number; promise: Promise<Representation> }>();
  /**
   * Refresh-ahead computations running, by key: a write heard while one runs (the writing process hears
   * its own write twice: at once, then from the bus) keeps its answer out, so it starts again.
   */
  private readonly refreshing = new Map<string, { stationId: string; areas: ReadAreas; refresh: Refresh; readAt: number }>();
  private readonly generations = new Map<string, number>();
  /**
   * The greatest `Representation.version` stored, by `<stationId>:<area>` (kept across drops: that is its
   * use), and whether only a seed has shown it so far (no computation has).
   */
  private readonly versions = new Map<string, { version: readonly number[]; seeded: boolean }>();
  private readonly keysByStation = new Map<string, Set<string>>();
  private used = 0;
  readonly budget: number;
  private readonly maxAgeMs: number;
  private readonly routing: Pick<ReadRouting<unknown>, 'keeps'> | null;

  constructor(
    budgetBytes: number,
    maxAgeMs: number,
    invalidation?: Pick<Invalidation, 'on'>,
    routing: Pick<ReadRouting<unknown>, 'keeps'> | null = null,
  ) {
    this.budget = budgetBytes;
    this.maxAgeMs = maxAgeMs;
    this.routing = routing;
    if (invalidation) {
      invalidation.on('reads', (id, _lsn, seed) => {
        const sep = id.lastIndexOf(':');
        this.drop(id.slice(0, sep), id.slice(sep + 1) as ReadArea, seed);
      });
      invalidation.on('station', (id) => this.drop(id));
    }
  }

  /** Bytes currently held (entries' bodies plus an estimate of their bookkeeping). */
  get usedBytes(): number {
    return this.used;
  }

  get size(): number {
    return this.entries.size;
  }

  /**
   * The stored answer while it is exact at `nowMs` (the service clock) and within its safety age at
   * `realMs` (wall-clock time, read here unless the caller already has it), else undefined (an expired
   * one is dropped).
   */
  peek(key: string, nowMs: number, realMs = Date.now()): Representation | undefined {
    const entry = this.entries.get(key);
    if (entry === undefined) return undefined;
    if (realMs >= entry.hardExpiry || (nowMs >= entry.expires && !this.derive(entry, nowMs))) {
      this.remove(key, entry);
      return undefined;
    }
    entry.used = true;
    entry.readAt = realMs;
    return entry.rep;
  }

  /**
   * Puts in place of an expired answer the same answer at `nowMs`, derived without a read
   * (`Representation.later`): false when it has none. It keeps the entry's safety age: the data it was
   * computed from is as old as before.
   */
  private derive(entry: Entry, nowMs: number): boolean {
    let next: Representation | undefined;
    try {
      next = entry.rep.later?.(nowMs);
    } catch {
      return false;
    }
    if (next === undefined || next.validUntil <= nowMs) return false;
    const grown = next.bytes.length - entry.rep.bytes.length;
    entry.rep = next;
    entry.expires = next.validUntil;
    entry.size += grown;
    this.used += grown;
    return true;
  }

  /**
   * The answer for `key`: the stored one while exact, else `compute()` (shared by concurrent callers)
   * whose result is stored unless the area was invalidated while it ran (or, read on a replica, it shows
   * less than a write heard since: `basis`, which the computation fills in).
   */
  read(
    key: string,
    stationId: string,
    area: ReadAreas,
    nowMs: number,
    compute: (basis: ReadBasis) => Promise<Representation>,
    refresh?: Refresh,
  ): Representation | Promise<Representation> {
    const hit = this.peek(key, nowMs);
    cacheLookup(areasLabel(area), hit !== undefined);
    if (hit !== undefined) return hit;
    const generation = this.generation(stationId, typeof area === 'string' ? area : undefined);
    const inFlight = this.pending.get(key);
    if (inFlight !== undefined && inFlight.generation === generation) {
      // Joined a computation started a moment earlier: its answer must still be exact at this read's time.
      return inFlight.promise.then((rep) => (rep.validUntil > nowMs ? rep : this.read(key, stationId, area, nowMs, compute, refresh)));
    }
    return this.computeAndStore(key, stationId, area, generation, nowMs, compute, refresh);
  }

  /**
   * Computes `key` now, without a request (refresh-ahead, from a `Refresh`), unless its computation is
   * already running: a read arriving meanwhile joins it as it would join a request's. Stored as `read`
   * stores. Failures are dropped: the next read computes it as if nothing had run.
   */
  recompute(
    key: string,
    stationId: string,
    area: ReadAreas,
    nowMs: number,
    compute: (basis: ReadBasis) => Promise<Representation>,
    refresh: Refresh,
    readAt: number,
  ): void {
    const generation = this.generation(stationId, typeof area === 'string' ? area : undefined);
    if (this.pending.get(key)?.generation === generation) return;
    const kept = this.entries.get(key);
    if (kept !== undefined && nowMs < kept.expires) return;
    const running = { stationId, areas: area, refresh, readAt };
    this.refreshing.set(key, running);
    const done = () => {
      if (this.refreshing.get(key) === running) this.refreshing.delete(key);
    };
    this.computeAndStore(key, stationId, area, generation, nowMs, compute, refresh, readAt).then(done, done);
  }

  private computeAndStore(
    key: string,
    stationId: string,
    area: ReadAreas,
    generation: number,
    nowMs: number,
    compute: (basis: ReadBasis) => Promise<Representation>,
    refresh: Refresh | undefined,
    readAt = 0,
  ): Promise<Representation> {
    const basis: ReadBasis = { lsn: undefined };
    const promise = compute(basis).then(
      (rep) => {
        if (this.pending.get(key)?.promise === promise) this.pending.delete(key);
        this.store(key, stationId, area, generation, rep, nowMs, basis.lsn, refresh, readAt);
        return rep;
      },
      (err: unknown) => {
        if (this.pending.get(key)?.promise === promise) this.pending.delete(key);
        throw err;
      },
    );
    this.pending.set(key, { generation, promise });
    return promise;
  }

  /**
   * The computation of `key` running now that `read` would join (begun since the last invalidation of
   * `area`; of any area of the station when omitted, as `begin` registers it), else undefined: web's
   * cached reads wait for it instead of sending the request through the whole route only to join it
   * there (http/cachedReads.ts). It rejects when the computation had no answer to share.
   */
  running(key: string, stationId: string, area?: ReadAreas): Promise<Representation> | undefined {
    const inFlight = this.pending.get(key);
    if (inFlight === undefined || inFlight.generation !== this.generation(stationId, typeof area === 'string' ? area : undefined))
      return undefined;
    return inFlight.promise;
  }

  /**
   * Registers a computation of `key` whose areas are known only once it has run (a GraphQL response,
   * graphql/serve.ts): until `end`, `running(key, stationId)` returns it, so the same request made
   * meanwhile waits for its answer instead of running the whole operation again — when a now-playing
   * answer expires, every request of the next moment would. It is joined only while no area of the
   * station was invalidated since it began. `end(rep)` shares the answer it stored, `end(unkept)` an
   * answer not kept (an error's: those who waited reject with it), and `end()` nothing: whoever waited
   * computes their own.
   */
  begin(key: string, stationId: string): { generation: number; end(answer?: Representation | UnkeptAnswer): void } {
    const generation = this.generation(stationId);
    let resolve!: (rep: Representation) => void;
    let reject!: (err: Error) => void;
    const promise = new Promise<Representation>((ok, fail) => ((resolve = ok), (reject = fail)));
    promise.catch(() => undefined); // nobody may be waiting: a computation without an answer is no unhandled rejection
    const flight = { generation, promise };
    this.pending.set(key, flight);
    return {
      generation,
      end: (answer) => {
        if (this.pending.get(key) === flight) this.pending.delete(key);
        if (answer instanceof Representation) resolve(answer);
        else reject(answer ?? new Error('the computation joined had no answer to share'));
      },
    };
  }

  /** A token that changes with every invalidation of the area (of any area of the station when omitted). */
  generation(stationId: string, area?: ReadArea): number {
    if (area !== undefined) return this.generations.get(`${stationId}:${area}`) ?? 0;
    // Counters only grow, so their sum changes exactly when one of them does.
    let sum = 0;
    for (const each of READ_AREAS) sum += this.generations.get(`${stationId}:${each}`) ?? 0;
    return sum;
  }

  /**
   * Keeps `rep` unless the generation moved since `generation` was taken (of `area`, or of the whole
   * station when `area` is a list: an answer showing several areas), or it is already out of date, or it
   * was read on a replica at `lsn`, older than a write of the station heard since.
   */
  store(
    key: string,
    stationId: string,
    area: ReadArea | readonly ReadArea[],
    generation: number,
    rep: Representation,
    nowMs: number,
    lsn?: bigint,
    refresh?: Refresh,
    readAt = 0,
  ): void {
    const single = typeof area === 'string';
    if (this.budget === 0 || this.generation(stationId, single ? area : undefined) !== generation) return;
    if (lsn !== undefined && this.routing !== null && !this.routing.keeps(stationId, lsn)) return;
    const expires = rep.validUntil;
    if (expires <= nowMs) return;
    const size = rep.bytes.length + key.length * 2 + ENTRY_OVERHEAD;
    if (size > this.budget / 8) return;
    if (rep.version !== undefined)
      for (const each of single ? [area] : area) {
        const name = `${stationId}:${each}`;
        // A computed answer of the version a seed showed settles it: the seed may not come back.
        if (showsAsMuch(rep.version, this.versions.get(name))) this.versions.set(name, { version: rep.version, seeded: false });
      }
    const previous = this.entries.get(key);
    if (previous) this.remove(key, previous);
    this.entries.set(key, {
      rep,
      stationId,
      areas: single ? [area] : area,
      expires,
      hardExpiry: Date.now() + this.maxAgeMs,
      size,
      used: false,
      readAt,
      refresh,
    });
    this.used += size;
    let keys = this.keysByStation.get(stationId);
    if (!keys) this.keysByStation.set(stationId, (keys = new Set()));
    keys.add(key);
    if (this.used > this.budget) this.evict();
  }

  /**
   * Drops one area of a station (or every area) and makes computations already running not store.
   * Dropping one area computes again, at once, the dropped answers that can be (`refresh`) and were read
   * from the cache in the last REFRESH_AHEAD_WINDOW_MS. A station change (every area) refreshes nothing:
   * what an answer was computed with (the station's settings) is what changed. A `seed` the write sent
   * (lib/invalidation.ts `parseChange`) goes to each refresh, which may answer from it at once (`seed`).
   */
  drop(stationId: string, area?: ReadArea, seed?: string): void {
    for (const each of area ? [area] : READ_AREAS) {
      const name = `${stationId}:${each}`;
      this.generations.set(name, (this.generations.get(name) ?? 0) + 1);
    }
    let refreshes: Array<[Refresh, number]> | undefined;
    if (area !== undefined)
      for (const running of this.refreshing.values()) {
        const areas = running.areas;
        if (running.stationId === stationId && (areas === area || (typeof areas !== 'string' && areas.includes(area))))
          (refreshes ??= []).push([running.refresh, running.readAt]);
      }
    const keys = this.keysByStation.get(stationId);
    const recent = Date.now() - REFRESH_AHEAD_WINDOW_MS;
    for (const key of keys ?? []) {
      const entry = this.entries.get(key);
      if (!entry || (area !== undefined && !entry.areas.includes(area))) continue;
      this.remove(key, entry);
      if (area !== undefined && entry.refresh !== undefined && entry.readAt > recent)
        (refreshes ??= []).push([entry.refresh, entry.readAt]);
    }
    if (refreshes)
      for (const [refresh, readAt] of refreshes) {
        try {
          refresh(readAt, seed);
        } catch {
          // the next read computes it
        }
      }
  }

  /**
   * Puts `rep`, an answer a refresh derived from the seed its write sent (no read), in place for `key`
   * while that refresh's own computation runs, whose answer replaces it when it comes. Kept only when it
   * shows more than every answer of its area stored before (`Representation.version`: a seed that
   * arrives after a later write's answer is ignored), or as much as a seed did and no computation yet
   * (the writing process hears its own change twice: at once, then from the bus), as `store` keeps
   * anything; false when not kept.
   */
  seed(key: string, stationId: string, area: ReadArea, rep: Representation, nowMs: number, refresh: Refresh, readAt: number): boolean {
    const name = `${stationId}:${area}`;
    if (rep.version === undefined || !showsAsMuch(rep.version, this.versions.get(name))) return false;
    this.store(key, stationId, area, this.generation(stationId, area), rep, nowMs, undefined, refresh, readAt);
    if (this.entries.get(key)?.rep !== rep) return false;
    this.versions.set(name, { version: rep.version, seeded: true });
    return true;
  }

  clear(): void {
    for (const [key, entry] of this.entries) this.remove(key, entry);
  }

  private remove(key: string, entry: Entry): void {
    this.entries.delete(key);
    this.used -= entry.size;
    const keys = this.keysByStation.get(entry.stationId);
    if (keys) {
      keys.delete(key);
      if (keys.size === 0) this.keysByStation.delete(entry.stationId);
    }
  }

  private evict(): void {
    // Second chance: an entry read since it was stored (or last moved) goes to the back once.
    let spared = 0;
    for (const [key, entry] of this.entries) {
      if (this.used <= this.budget) return;
      if (entry.used && spared < this.entries.size) {
        entry.used = false;
        this.entries.delete(key);
        this.entries.set(key, entry);
        spared++;
        continue;
      }
      this.remove(key, entry);
    }
  }
}

/**
 * After a write that changes what an area of a station's listener reads show: drops those answers
 * here at once and in every other process (through the invalidation bus). Call it after the commit.
 * `seed`: what the write already knows of the new answer (`RouteSpec.seeded`), sent along.
 */
export function invalidateReads(
  svc: { invalidation: Pick<Invalidation, 'invalidate'> },
  stationId: string,
  area: ReadArea,
  seed?: string,
): Promise<void> {
  return svc.invalidation.invalidate('reads', readsTopic(stationId, area), seed);
}
