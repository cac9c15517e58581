import { EventEmitter } from 'node:events';

// The in-process stand-in for Redis when REDIS_URL is unset (docs/embedded.md#when-the-embedded-default-applies): the few
// commands Waveline sends on its command and subscriber connections (publish/subscribe, GET/SET with
// expiry, sets), over one store per process. Every connection "opened" in the process shares it, so the
// feed bus, invalidation, job results and the gateway's bridge meet exactly as they do on a Redis server.
// It is not a Redis: one process only, nothing survives a restart (these are caches and signals), and
// BullMQ does not run on it (the job queue has its own in-process adapter, localQueue.ts).

interface Entry {
  value: string | Set<string>;
  expiresAt: number;
}

class Store {
  readonly data = new Map<string, Entry>();
  readonly subscribers = new Map<string, Set<MemoryRedis>>();
  readonly patterns = new Map<string, { match: RegExp; conns: Set<MemoryRedis> }>();

  read(key: string): Entry | undefined {
    const entry = this.data.get(key);
    if (entry && entry.expiresAt <= Date.now()) {
      this.data.delete(key);
      return undefined;
    }
    return entry;
  }
}

const store = new Store();

const wrongType = () => new Error('WRONGTYPE Operation against a key holding the wrong kind of value');

/** An ioredis-shaped connection to this process' in-memory store (only the commands Waveline uses). */
export class MemoryRedis extends EventEmitter {
  readonly isMemoryRedis = true;
  status = 'ready';
  private readonly channels = new Set<string>();
  private readonly patterns = new Set<string>();

  constructor() {
    super();
    // Like ioredis: the connection reports itself ready once, after the caller attached its listeners.
    queueMicrotask(() => this.status === 'ready' && this.emit('ready'));
  }

  async ping(): Promise<string> {
    return 'PONG';
  }

  async get(key: string): Promise<string | null> {
    const entry = store.read(key);
    if (entry && typeof entry.value !== 'string') throw wrongType();
    return entry ? (entry.value as string) : null;
  }

  /** SET key value [EX seconds | PX milliseconds]. */
  async set(key: string, value: string, mode?: 'EX' | 'PX', amount?: number): Promise<'OK'> {
    const ttlMs = mode === 'EX' ? Number(amount) * 1000 : mode === 'PX' ? Number(amount) : Infinity;
    store.data.set(key, { value: String(value), expiresAt: Date.now() + ttlMs });
    return 'OK';
  }

  async del(...keys: string[]): Promise<number> {
    let removed = 0;
    for (const key of keys) if (store.read(key) && store.data.delete(key)) removed++;
    return removed;
  }

  private set_(key: string, create: boolean): Set<string> | undefined {
    const entry = store.read(key);
    if (entry && typeof entry.value === 'string') throw wrongType();
    if (entry) return entry.value as Set<string>;
    if (!create) return undefined;
    const value = new Set<string>();
    store.data.set(key, { value, expiresAt: Infinity });
    return value;
  }

  async sadd(key: string, ...members: string[]): Promise<number> {
    const set = this.set_(key, true)!;
    const before = set.size;
    for (const m of members.flat()) set.add(String(m));
    return set.size - before;
  }

  async srem(key: string, ...members: string[]): Promise<number> {
    const set = this.set_(key, false);
    if (!set) return 0;
    let removed = 0;
    for (const m of members.flat()) if (set.delete(String(m))) removed++;
    if (set.size === 0) store.data.delete(key);
    return removed;
  }

  async smembers(key: string): Promise<string[]> {
    return [...(this.set_(key, false) ?? [])];
  }

  async flushdb(): Promise<'OK'> {
    store.data.clear();
    return 'OK';
  }

  /** Delivered after the current turn, as a message from a server would be. */
  async publish(channel: string, message: string): Promise<number> {
    const receivers = [...(store.subscribers.get(channel) ?? [])];
    const byPattern = [...store.patterns]
      .filter(([, p]) => p.match.test(channel))
      .flatMap(([pattern, p]) => [...p.conns].map((conn) => ({ pattern, conn })));
    if (receivers.length || byPattern.length) {
      queueMicrotask(() => {
        for (const conn of receivers) if (conn.channels.has(channel)) conn.emit('message', channel, message);
        for (const { pattern, conn } of byPattern) if (conn.patterns.has(pattern)) conn.emit('pmessage', pattern, channel, message);
      });
    }
    return receivers.length + byPattern.length;
  }

  /** PSUBSCRIBE with Redis' glob patterns (`*`, `?`, `[…]`). */
  async psubscribe(...patterns: string[]): Promise<number> {
    for (const pattern of patterns.flat()) {
      this.patterns.add(pattern);
      const entry = store.patterns.get(pattern) ?? { match: globToRegExp(pattern), conns: new Set<MemoryRedis>() };
      entry.conns.add(this);
      store.patterns.set(pattern, entry);
    }
    return this.channels.size + this.patterns.size;
  }

  async punsubscribe(...patterns: string[]): Promise<number> {
    for (const pattern of patterns.length ? patterns.flat() : [...this.patterns]) {
      this.patterns.delete(pattern);
      const entry = store.patterns.get(pattern);
      entry?.conns.delete(this);
      if (entry?.conns.size === 0) store.patterns.delete(pattern);
    }
    return this.channels.size + this.patterns.size;
  }

  async subscribe(...channels: string[]): Promise<number> {
    for (const channel of channels.flat()) {
      this.channels.add(channel);
      const set = store.subscribers.get(channel) ?? new Set<MemoryRedis>();
      set.add(this);
      store.subscribers.set(channel, set);
    }
    return this.channels.size;
  }

  async unsubscribe(...channels: string[]): Promise<number> {
    for (const channel of channels.length ? channels.flat() : [...this.channels]) {
      this.channels.delete(channel);
      const set = store.subscribers.get(channel);
      set?.delete(this);
      if (set?.size === 0) store.subscribers.delete(channel);
    }
    return this.channels.size;
  }

  /** Scripts are Redis-side; callers check `isMemoryRedis` and compute in process instead. */
  defineCommand(): void {}

  async quit(): Promise<'OK'> {
    this.disconnect();
    return 'OK';
  }

  disconnect(): void {
    void this.unsubscribe();
    void this.punsubscribe();
    this.status = 'end';
  }
}

function globToRegExp(glob: string): RegExp {
  let source = '';
  for (const ch of glob)
    source += ch === '*' ? '.*' : ch === '?' ? '.' : ch === '[' || ch === ']' ? ch : ch.replace(/[.+^${}()|\\/]/g, '\\$&');
  return new RegExp(`^${source}$`, 's');
}

export const isMemoryRedis = (conn: object): conn is MemoryRedis => (conn as { isMemoryRedis?: boolean }).isMemoryRedis === true;
