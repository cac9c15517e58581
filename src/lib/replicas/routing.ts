import { DatabaseUnavailableError, WavelineError } from '../errors.ts';
import type { Logger } from '../logger.ts';
import { dbReads, replicaLag } from './metrics.ts';

// Listener reads on Postgres streaming replicas, with read-your-writes (docs/operations.md#postgres-read-replicas).
//
// A write's commit LSN (the primary's WAL insert position once it has committed) travels with its
// invalidation and its feed bus message; every process remembers, per station, the newest LSN it heard.
// A listener read of a station picks a replica whose replay position (`pg_last_wal_replay_lsn()`, probed
// in the background) has reached that LSN; when none has, it waits for one up to `waitMs` (200 ms), then
// reads the primary. A replica that is down or lags more than the maximum lag is skipped until it catches
// up; a read that fails on a replica runs again on the primary.
//
// Generic over the handle a read runs on (a knex instance in web, a pg pool in the gateway, which never
// loads knex): a replica is its handle and a function running one SQL statement on it.

/** A WAL position (`0/3016038`) as a number: comparable. */
export function parseLsn(text: string): bigint {
  const slash = text.indexOf('/');
  if (slash < 1) throw new Error(`not an LSN: ${text}`);
  return (BigInt(`0x${text.slice(0, slash)}`) << 32n) | BigInt(`0x${text.slice(slash + 1)}`);
}

export function formatLsn(lsn: bigint): string {
  return `${(lsn >> 32n).toString(16).toUpperCase()}/${(lsn & 0xffffffffn).toString(16).toUpperCase()}`;
}

/**
 * The end of what the primary has written when its insert position is `lsn`. Right after a page's short
 * header (24 bytes into an 8 KiB WAL page) the last record ended at the page boundary, and a replica's
 * replay position (the end of the last record it replayed) stops there: without this, an idle primary
 * could stay 24 bytes ahead of every replica. (A record never ends 24 bytes into a page: its continuation
 * holds at least 8 bytes; a segment's first page has a 40-byte header, where this never applies.)
 */
export function writtenUpTo(lsn: bigint): bigint {
  return lsn % 8192n === 24n ? lsn - 24n : lsn;
}

/** `host:port` of a Postgres URL: how a replica is named in logs, /readyz and metrics (never its password). */
export function replicaName(url: string): string {
  try {
    const parsed = new URL(url);
    return `${parsed.hostname}:${parsed.port || '5432'}`;
  } catch {
    return 'replica';
  }
}

/** The statement that reads the primary's WAL insert position. */
export const WAL_POSITION_SQL = 'SELECT pg_current_wal_insert_lsn()::text AS lsn';

/** Runs one statement on a handle, answering its rows. */
export type Query = (sql: string) => Promise<Array<Record<string, unknown>>>;

/**
 * The primary's WAL insert position, asked once a write has committed: at or past the end of its commit
 * record, so a replica that has replayed up to it shows the write. Callers arriving while a question is
 * out wait for the next one (an answer asked before their commit could be older than it).
 */
export class WalPosition {
  private readonly query: Query;
  private current: Promise<string> | null = null;
  private next: Promise<string> | null = null;
  constructor(query: Query) {
    this.query = query;
  }

  read(): Promise<string> {
    if (this.current === null) return this.ask();
    if (this.next === null) {
      const after = this.current.then(
        () => undefined,
        () => undefined,
      );
      this.next = after.then(() => {
        this.next = null;
        return this.ask();
      });
    }
    return this.next;
  }

  private ask(): Promise<string> {
    const asked = this.query(WAL_POSITION_SQL).then((rows) => formatLsn(writtenUpTo(parseLsn(String(rows[0]?.lsn)))));
    this.current = asked;
    const clear = () => {
      if (this.current === asked) this.current = null;
    };
    asked.then(clear, clear);
    return asked;
  }
}

export interface ReplicaStatus {
  /** `host:port`. */
  name: string;
  /** Answered its last probe, as a replica in recovery. */
  reachable: boolean;
  /** Seconds its replay is behind (0 when it has replayed everything it received); null before a probe answered. */
  lagSeconds: number | null;
  /** Its replay position at the last probe. */
  replayLsn: string | null;
  /** Whether reads go to it: reachable and within the maximum lag. */
  used: boolean;
}

interface Replica<H> {
  name: string;
  handle: H;
  query: Query;
  reachable: boolean;
  lagSeconds: number | null;
  replay: bigint;
  /** Waiters for a replay position (resolved by the poll that sees it, or by the deadline). */
  waiters: Array<{ lsn: bigint; done(ok: boolean): void }>;
  polling: boolean;
}

/** Where a read runs, and why (the `reason` label of `waveline_db_reads_total`). */
export interface ReadChoice<H> {
  handle: H;
  /** The replica's name, or null for the primary. */
  replica: string | null;
  /** On a replica: the replay position it had reached when chosen (what the answer shows at least). */
  lsn: bigint | undefined;
  reason: ReadReason;
}

/**
 * `replica`: `caught-up` (it had replayed what the station needs), `waited` (it did within the wait).
 * `primary`: `behind` (no replica replayed the station's last write within the wait), `unavailable` (no
 * replica reachable within the maximum lag), `replica-failed` (the read failed on a replica and ran again
 * here).
 */
export type ReadReason = 'caught-up' | 'waited' | 'behind' | 'unavailable' | 'replica-failed';

export interface ReadRoutingOptions<H> {
  primary: H;
  replicas: ReadonlyArray<{ name: string; handle: H; query: Query }>;
  maxLagSeconds: number;
  logger: Logger;
  /** How long a read waits for a replica to replay its station's last write (200 ms). */
  waitMs?: number;
  /** Background probe interval per replica (500 ms). */
  probeIntervalMs?: number;
  /** While reads wait, how often the waited-for replica is asked its replay position (10 ms). */
  pollMs?: number;
  /**
   * The primary's WAL position, asked once at start: the floor of every station's read, so a process
   * that starts after a write answered never reads a replica older than it, though it never heard of it.
   * Until it has answered, every read is on the primary.
   */
  primaryPosition: () => Promise<string>;
}

const PROBE_SQL = 'SELECT pg_is_in_recovery() AS recovery, pg_last_wal_replay_lsn()::text AS replay';
const POLL_SQL = 'SELECT pg_last_wal_replay_lsn()::text AS replay';
/** How many stations' last LSNs a process remembers before it forgets the oldest ones (their reads then use the newest LSN forgotten). */
const MAX_STATIONS = 100_000;

export class ReadRouting<H> {
  readonly primary: H;
  private readonly replicas: Replica<H>[];
  private readonly maxLagSeconds: number;
  private readonly logger: Logger;
  private readonly waitMs: number;
  private readonly pollMs: number;
  /** The newest commit LSN heard per station: a read of it must show at least that. */
  private readonly required = new Map<string, bigint>();
  /** The newest LSN forgotten when the map was trimmed: the floor of every station not in it. */
  private floor = 0n;
  /** The newest LSN heard of any station: what a read of several stations (an SPI document) must show. */
  private newest = 0n;
  private next = 0;
  private readonly primaryPosition: () => Promise<string>;
  /** Whether the floor was read from the primary at start (until then: every read on the primary). */
  private started = false;
  /**
   * The primary's WAL position at each probe, oldest first: a replica's lag is how long ago the primary
   * first wrote past what the replica has replayed (0 when it has replayed the newest).
   */
  private samples: Array<{ at: number; lsn: bigint }> = [];
  private primaryWarned = false;
  private readonly timer: NodeJS.Timeout;
  private closed = false;

  constructor(options: ReadRoutingOptions<H>) {
    this.primary = options.primary;
    this.maxLagSeconds = options.maxLagSeconds;
    this.logger = options.logger;
    this.waitMs = options.waitMs ?? 200;
    this.pollMs = options.pollMs ?? 10;
    this.replicas = options.replicas.map((r) => ({
      ...r,
      reachable: false,
      lagSeconds: null,
      replay: 0n,
      waiters: [],
      polling: false,
    }));
    this.primaryPosition = options.primaryPosition;
    const interval = options.probeIntervalMs ?? 500;
    void this.probeAll();
    this.timer = setInterval(() => void this.probeAll(), interval);
    this.timer.unref();
  }

  /** Remembers that a read of `stationId` must show at least `lsn` (a write's, heard from any process). */
  heard(stationId: string, lsn: string | bigint): void {
    let value: bigint;
    try {
      value = typeof lsn === 'bigint' ? lsn : parseLsn(lsn);
    } catch {
      return;
    }
    if (value > this.newest) this.newest = value;
    const known = this.required.get(stationId);
    if (known !== undefined && known >= value) return;
    if (known === undefined && this.required.size >= MAX_STATIONS) this.trim();
    this.required.set(stationId, value);
  }

  /** What a read of the station must show at least (0: no write heard); of every station when null. */
  requiredLsn(stationId: string | null): bigint {
    if (stationId === null) return this.newest;
    const heard = this.required.get(stationId);
    return heard !== undefined && heard > this.floor ? heard : this.floor;
  }

  /**
   * Every read from now on must show at least what the primary has written by now: after this process
   * may have missed write positions (its Redis connection came back). When the primary does not answer,
   * every read goes to the primary until a probe reads its position again.
   */
  async raiseFloor(): Promise<void> {
    try {
      const lsn = writtenUpTo(parseLsn(await withTimeout(this.primaryPosition(), 2000)));
      if (lsn > this.floor) this.floor = lsn;
      if (lsn > this.newest) this.newest = lsn;
    } catch {
      this.started = false;
    }
  }

  /**
   * Whether an answer read at `lsn` (undefined: on the primary) may be kept for the station: not when a
   * write it does not show has been heard since.
   */
  keeps(stationId: string | null, lsn: bigint | undefined): boolean {
    return lsn === undefined || lsn >= this.requiredLsn(stationId);
  }

  /** Where a read of `stationId` runs now: synchronous unless it has to wait for a replica. */
  choose(stationId: string | null): ReadChoice<H> | Promise<ReadChoice<H>> {
    if (!this.started) return this.onPrimary('unavailable');
    const need = this.requiredLsn(stationId);
    const count = this.replicas.length;
    let best: Replica<H> | undefined;
    for (let i = 0; i < count; i++) {
      const replica = this.replicas[(this.next + i) % count];
      if (!this.usable(replica)) continue;
      if (replica.replay >= need) {
        this.next = (this.next + i + 1) % count;
        return { handle: replica.handle, replica: replica.name, lsn: replica.replay, reason: 'caught-up' };
      }
      if (best === undefined || replica.replay > best.replay) best = replica;
    }
    if (best === undefined) return this.onPrimary('unavailable');
    const waited = best;
    return this.waitFor(waited, need).then((ok) =>
      ok && this.usable(waited)
        ? { handle: waited.handle, replica: waited.name, lsn: waited.replay, reason: 'waited' as const }
        : this.onPrimary('behind'),
    );
  }

  /**
   * Runs `read` where `choose` says; a read that fails on a replica runs again on the primary (a replica
   * never makes a listener read fail). Answers the value and the LSN it shows (undefined: the primary's).
   */
  async run<T>(
    stationId: string | null,
    read: (handle: H) => Promise<T>,
    retries: (err: unknown) => boolean = retriesOnPrimary,
  ): Promise<{ value: T; lsn: bigint | undefined }> {
    const chosen = await this.choose(stationId);
    if (chosen.replica === null) {
      dbReads.inc({ target: 'primary', reason: chosen.reason });
      return { value: await read(chosen.handle), lsn: undefined };
    }
    try {
      const value = await read(chosen.handle);
      dbReads.inc({ target: 'replica', reason: chosen.reason });
      return { value, lsn: chosen.lsn };
    } catch (err) {
      if (!retries(err)) throw err;
      this.logger.warn({ err, replica: chosen.replica }, 'a listener read failed on a replica; reading the primary');
      const replica = this.replicas.find((r) => r.name === chosen.replica);
      if (replica && isConnectionError(err)) replica.reachable = false; // until the next probe answers
      dbReads.inc({ target: 'primary', reason: 'replica-failed' });
      return { value: await read(this.primary), lsn: undefined };
    }
  }

  /**
   * Counts a read made outside `run` (GraphQL runs a whole operation on one choice): where it ran, or,
   * `failed`, that it failed on the replica chosen and ran again on the primary.
   */
  count(choice: ReadChoice<H>, failed = false): void {
    if (failed) dbReads.inc({ target: 'primary', reason: 'replica-failed' });
    else dbReads.inc({ target: choice.replica === null ? 'primary' : 'replica', reason: choice.reason });
  }

  /** Each replica's reachability and lag at its last probe (/readyz). */
  status(): ReplicaStatus[] {
    return this.replicas.map((r) => ({
      name: r.name,
      reachable: r.reachable,
      lagSeconds: r.lagSeconds,
      replayLsn: r.reachable ? formatLsn(r.replay) : null,
      used: this.usable(r),
    }));
  }

  close(): void {
    this.closed = true;
    clearInterval(this.timer);
    for (const replica of this.replicas) for (const waiter of replica.waiters.splice(0)) waiter.done(false);
  }

  private onPrimary(reason: ReadReason): ReadChoice<H> {
    return { handle: this.primary, replica: null, lsn: undefined, reason };
  }

  private usable(replica: Replica<H>): boolean {
    return replica.reachable && replica.lagSeconds !== null && replica.lagSeconds <= this.maxLagSeconds;
  }

  private trim(): void {
    // Forget the first tenth (the oldest heard); their reads then need the newest LSN among them.
    let drop = Math.ceil(this.required.size / 10);
    for (const [station, lsn] of this.required) {
      if (drop-- <= 0) break;
      if (lsn > this.floor) this.floor = lsn;
      this.required.delete(station);
    }
  }

  private async probeAll(): Promise<void> {
    if (this.closed) return;
    try {
      const lsn = writtenUpTo(parseLsn(await withTimeout(this.primaryPosition(), 2000)));
      const now = Date.now();
      this.samples.push({ at: now, lsn });
      // Kept long enough to tell any lag up to twice the maximum (older ones only say "more than that").
      const horizon = now - (this.maxLagSeconds * 2 + 5) * 1000;
      while (this.samples.length > 2 && this.samples[1].at < horizon) this.samples.shift();
      this.primaryWarned = false;
      if (!this.started) {
        if (lsn > this.floor) this.floor = lsn;
        if (lsn > this.newest) this.newest = lsn;
        this.started = true;
      }
    } catch (err) {
      if (!this.primaryWarned) this.logger.warn({ err: String(err) }, "could not read the primary WAL position for the replicas' lag");
      this.primaryWarned = true;
    }
    await Promise.all(this.replicas.map((replica) => this.probe(replica)));
  }

  /** Seconds since the primary first wrote past `replay` (0: the replica has replayed all it was seen to write). */
  private lagOf(replay: bigint): number | null {
    if (this.samples.length === 0) return null;
    const now = Date.now();
    for (const sample of this.samples) if (sample.lsn > replay) return Math.max(0, (now - sample.at) / 1000);
    return 0;
  }

  private async probe(replica: Replica<H>): Promise<void> {
    if (this.closed) return;
    try {
      const [row] = await withTimeout(replica.query(PROBE_SQL), 2000);
      if (row?.recovery !== true || typeof row.replay !== 'string') throw new Error('not a replica in recovery');
      const wasUsed = this.usable(replica);
      replica.reachable = true;
      this.advance(replica, parseLsn(row.replay));
      replica.lagSeconds = this.lagOf(replica.replay);
      const used = this.usable(replica);
      if (used !== wasUsed)
        this.logger.info({ replica: replica.name, lagSeconds: replica.lagSeconds }, used ? 'replica in use' : 'replica skipped: lagging');
    } catch (err) {
      if (replica.reachable) this.logger.warn({ err: String(err), replica: replica.name }, 'replica skipped: unreachable');
      replica.reachable = false;
      replica.lagSeconds = null;
    }
    replicaLag.set({ replica: replica.name }, replica.reachable && replica.lagSeconds !== null ? replica.lagSeconds : -1);
  }

  private advance(replica: Replica<H>, replay: bigint): void {
    if (replay > replica.replay) replica.replay = replay;
    if (replica.waiters.length === 0) return;
    replica.waiters = replica.waiters.filter((w) => {
      if (w.lsn > replica.replay) return true;
      w.done(true);
      return false;
    });
  }

  /** Resolves true once the replica has replayed `lsn`, false after `waitMs`. */
  private waitFor(replica: Replica<H>, lsn: bigint): Promise<boolean> {
    return new Promise<boolean>((resolve) => {
      let settled = false;
      const waiter = {
        lsn,
        done: (ok: boolean) => {
          if (settled) return;
          settled = true;
          clearTimeout(timer);
          resolve(ok);
        },
      };
      const timer = setTimeout(() => {
        replica.waiters = replica.waiters.filter((w) => w !== waiter);
        waiter.done(false);
      }, this.waitMs);
      replica.waiters.push(waiter);
      if (!replica.polling) void this.poll(replica);
    });
  }

  /** While reads wait for it, asks the replica its replay position every `pollMs` (one question at a time). */
  private async poll(replica: Replica<H>): Promise<void> {
    replica.polling = true;
    try {
      while (replica.waiters.length > 0 && !this.closed) {
        try {
          const [row] = await withTimeout(replica.query(POLL_SQL), this.waitMs);
          if (typeof row?.replay === 'string') this.advance(replica, parseLsn(row.replay));
        } catch {
          for (const waiter of replica.waiters.splice(0)) waiter.done(false);
          break;
        }
        if (replica.waiters.length > 0) await new Promise((ok) => setTimeout(ok, this.pollMs));
      }
    } finally {
      replica.polling = false;
    }
  }
}

/** A read that failed on a replica runs again on the primary, unless it failed as the request did (a 404, a 400). */
export function retriesOnPrimary(err: unknown): boolean {
  return !(err instanceof WavelineError) || err instanceof DatabaseUnavailableError;
}

/**
 * Runs a listener read of `stationId` (null: of several stations) with `svc` whose `db` is where the
 * read is routed: a replica that has replayed the station's last write, else the primary; `svc` itself
 * without replicas. `basis.lsn` gets the replay position the answer shows (left undefined on the primary),
 * for a cache to decide whether it may keep the answer (`keeps`).
 */
export function readOn<S extends { db: unknown; replicas: ReadRouting<S['db']> | null }, T>(
  svc: S,
  stationId: string | null,
  read: (on: S) => Promise<T>,
  basis?: { lsn: bigint | undefined },
): Promise<T> {
  const replicas = svc.replicas;
  if (replicas === null) return read(svc);
  return replicas
    .run(stationId, (db) => read(onHandle(svc, db)))
    .then(({ value, lsn }) => {
      if (basis) basis.lsn = lsn;
      return value;
    });
}

const views = new WeakMap<object, Map<unknown, object>>();

/**
 * `svc` with `db` replaced by a replica's handle: what a listener read's handler gets, so the domains'
 * queries, which read `svc.db`, run where the read was routed. One view per services and handle, made
 * once; every other service (caches that query the primary themselves) is the same object.
 */
export function onHandle<S extends { db: unknown }>(svc: S, db: S['db']): S {
  if (db === svc.db) return svc;
  let byHandle = views.get(svc);
  if (byHandle === undefined) views.set(svc, (byHandle = new Map()));
  let view = byHandle.get(db) as S | undefined;
  if (view === undefined) byHandle.set(db, (view = Object.create(svc, { db: { value: db, enumerable: true } }) as S));
  return view;
}

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    promise.finally(() => clearTimeout(timer)),
    new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
      timer.unref();
    }),
  ]);
}

/** A failure to reach the server (rather than an error of the statement). */
function isConnectionError(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  if (typeof code === 'string' && (code.startsWith('E') || code.startsWith('08') || code === '57P01' || code === '57P03')) return true;
  const message = err instanceof Error ? err.message : '';
  return /timeout|terminat|connect/i.test(message);
}
