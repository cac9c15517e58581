/** A small in-process TTL cache. Entries are also dropped by cross-process invalidation (lib/invalidation.ts). */
export class TtlCache<K, V> {
  protected readonly entries = new Map<K, { value: V; expires: number }>();
  protected readonly ttlMs: number;
  private readonly maxEntries: number;
  /** Bumped by every drop: a load that started before one does not store what it read (`LoadingCache`). */
  protected generation = 0;
  constructor(ttlMs: number, maxEntries = 10_000) {
    this.ttlMs = ttlMs;
    this.maxEntries = maxEntries;
  }

  /** `nowMs`: the time to judge the entry's age by, when the caller has already read the clock. */
  get(key: K, nowMs = Date.now()): V | undefined {
    const hit = this.entries.get(key);
    if (!hit) return undefined;
    if (hit.expires <= nowMs) {
      this.entries.delete(key);
      return undefined;
    }
    return hit.value;
  }

  set(key: K, value: V, nowMs = Date.now()): void {
    if (this.entries.size >= this.maxEntries) {
      const oldest = this.entries.keys().next();
      if (!oldest.done) this.entries.delete(oldest.value);
    }
    this.entries.set(key, { value, expires: nowMs + this.ttlMs });
  }

  delete(key: K): void {
    this.generation++;
    this.entries.delete(key);
  }

  /** Drops every entry whose value matches. */
  deleteWhere(match: (value: V, key: K) => boolean): void {
    this.generation++;
    for (const [key, entry] of this.entries) if (match(entry.value, key)) this.entries.delete(key);
  }

  clear(): void {
    this.generation++;
    this.entries.clear();
  }
}

/**
 * A TtlCache that loads its own entries: one load per key at a time (concurrent misses share it), and an
 * entry read in the last quarter of its TTL is reloaded in the background while it is still served. So a
 * key read all the time never expires under its readers: without this, every TTL expiry of the station or
 * the credential sent every request arriving during the reload — dozens under load — through the full
 * route and its own database query (docs/benchmarks.md#caches-that-reload-before-they-expire). The freshness bound is
 * unchanged: an entry is never served past its TTL, and a load that began before a drop (an invalidation)
 * stores nothing.
 */
export class LoadingCache<K, V> extends TtlCache<K, V> {
  private readonly loading = new Map<K, { promise: Promise<V>; generation: number }>();
  private readonly load: (key: K) => Promise<V>;
  private readonly onBackgroundError: (err: unknown) => void;
  constructor(ttlMs: number, load: (key: K) => Promise<V>, onBackgroundError: (err: unknown) => void, maxEntries = 10_000) {
    super(ttlMs, maxEntries);
    this.load = load;
    this.onBackgroundError = onBackgroundError;
  }

  /** The entry without waiting (undefined: not cached); starts its reload when it is near its expiry. */
  /** The entry while it is fresh at `realMs` (wall-clock time: a caller that read it once for several caches passes it). */
  peek(key: K, realMs = Date.now()): V | undefined {
    const hit = this.entries.get(key);
    if (hit === undefined) return undefined;
    const left = hit.expires - realMs;
    if (left <= 0) {
      this.entries.delete(key);
      return undefined;
    }
    if (left < this.ttlMs / 4 && this.loading.get(key)?.generation !== this.generation) this.fetch(key).catch(this.onBackgroundError);
    return hit.value;
  }

  /** The entry, loaded when it is not cached (shared with a load already running for the key). */
  async getOrLoad(key: K): Promise<V> {
    const value = this.peek(key);
    return value !== undefined ? value : this.fetch(key);
  }

  /** A load of `key` begun since the last drop (one begun before it may have read what the drop replaced). */
  private fetch(key: K): Promise<V> {
    const generation = this.generation;
    const running = this.loading.get(key);
    if (running !== undefined && running.generation === generation) return running.promise;
    const done = () => {
      if (this.loading.get(key) === entry) this.loading.delete(key);
    };
    const promise = this.load(key).then(
      (value) => {
        done();
        if (this.generation === generation) this.set(key, value);
        return value;
      },
      (err: unknown) => {
        done();
        throw err;
      },
    );
    const entry = { promise, generation };
    this.loading.set(key, entry);
    return promise;
  }
}
