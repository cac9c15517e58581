import pg from 'pg';
import { shareEmbeddedSession } from '../lib/embedded/postgres.ts';
import type { FeedKind } from '../feed/names.ts';
import { DEFAULT_MODULES, type Modules } from '../domains/stations/model.ts';
import type { Logger } from '../lib/logger.ts';
import { ReadRouting, replicaName, WAL_POSITION_SQL } from '../lib/replicas/routing.ts';

// The gateway's only reads from Postgres, with plain `pg` (the gateway never loads knex). Each query is a
// single statement, so the rows and the station's feed sequence come from one snapshot: every change up
// to `feedSeq` is reflected, none after it.

/** A feed row as the gateway holds it; `data` is absent when only the row's existence was loaded. */
export interface StoredRow {
  kind: FeedKind;
  entry: string;
  seq: number;
  deleted: boolean;
  data?: unknown;
  updatedAt: string;
}

export interface StationGate {
  active: boolean;
  publicOnline: boolean;
  realtime: boolean;
  /** The station's streams: key → latency in ms (docs/realtime.md#listener-time-stream). */
  streams: ReadonlyMap<string, number>;
}

/**
 * Stream keys and latencies of `profile.streamUrls[]`: `key` (older rows may lack it: `stream-{n}` by its
 * 1-based position) and `latencySeconds` (absent: 0; held to 0–600).
 */
export function streamLatencies(streamUrls: unknown): Map<string, number> {
  const streams = new Map<string, number>();
  if (!Array.isArray(streamUrls)) return streams;
  for (const [i, entry] of streamUrls.entries()) {
    const { key, latencySeconds } = (entry ?? {}) as { key?: unknown; latencySeconds?: unknown };
    const seconds = typeof latencySeconds === 'number' && Number.isFinite(latencySeconds) ? Math.min(600, Math.max(0, latencySeconds)) : 0;
    const name = typeof key === 'string' && key !== '' ? key : `stream-${i + 1}`;
    if (!streams.has(name)) streams.set(name, Math.round(seconds * 1000));
  }
  return streams;
}

export interface RowsAtSeq {
  /** The station's feed sequence at the time of the read; null when the station does not exist. */
  feedSeq: number | null;
  /** The station's feed history: its epoch and the highest seq of a pruned tombstone (cursor.ts). */
  history: { epoch: string; prunedSeq: number } | null;
  rows: StoredRow[];
}

/** The current rows, with the kinds the station's modules switch off, from one snapshot. */
export interface CurrentRows extends RowsAtSeq {
  hidden: FeedKind[];
}

/** The module that delivers each kind of feed row; a kind whose module is off is not sent. */
const KIND_MODULES: Record<FeedKind, keyof Modules> = {
  schedule: 'schedule',
  'on-air': 'currentBroadcast',
  'now-playing': 'nowPlaying',
  content: 'content',
};

/** The kinds a station's module settings (the stored, partial `modules`) switch off. */
export function hiddenKinds(modules: Partial<Modules> | null): FeedKind[] {
  const all = { ...DEFAULT_MODULES, ...modules };
  return (Object.keys(KIND_MODULES) as FeedKind[]).filter((kind) => !all[KIND_MODULES[kind]]);
}

interface RowRecord {
  feed_seq: string | number | null;
  feed_epoch?: string | null;
  feed_pruned_seq?: string | number | null;
  modules?: Partial<Modules> | null;
  kind: FeedKind | null;
  entry: string;
  seq: string | number;
  deleted: boolean;
  has_data: boolean;
  data: unknown;
  updated_at: Date;
}

function toRows(records: RowRecord[]): RowsAtSeq {
  if (records.length === 0) return { feedSeq: null, history: null, rows: [] };
  const rows: StoredRow[] = [];
  for (const r of records) {
    if (r.kind === null) continue; // the station exists but has no matching row
    const row: StoredRow = { kind: r.kind, entry: r.entry, seq: Number(r.seq), deleted: r.deleted, updatedAt: r.updated_at.toISOString() };
    if (r.has_data) row.data = r.data;
    rows.push(row);
  }
  const first = records[0];
  const history = typeof first.feed_epoch === 'string' ? { epoch: first.feed_epoch, prunedSeq: Number(first.feed_pruned_seq ?? 0) } : null;
  return { feedSeq: Number(first.feed_seq), history, rows };
}

/** Read replicas of the gateway's database (DATABASE_REPLICA_URLS) and how far behind one may replay. */
export interface FeedStoreReplicas {
  urls: readonly string[];
  maxLagSeconds: number;
}

export class FeedStore {
  private readonly pool: pg.Pool;
  private readonly replicaPools: pg.Pool[] = [];
  /**
   * With read replicas: where each read runs (lib/replicas/routing.ts). Every query here reads one station (its
   * first parameter), routed to a replica that has replayed the newest write of it this gateway heard
   * (from the invalidation channel and the feed messages: `heard`), else the primary.
   */
  readonly routing: ReadRouting<pg.Pool> | null = null;
  /** Queries sent so far (tests and bench:reconnect check that reconnecting clients cost none of their own). */
  queries = 0;
  constructor(databaseUrl: string, logger: Logger, max = 4, replicas: FeedStoreReplicas = { urls: [], maxLagSeconds: 10 }) {
    const open = (url: string): pg.Pool => {
      const pool = new pg.Pool({ connectionString: url, max, idleTimeoutMillis: 30_000 });
      pool.on('error', (err) => logger.warn({ err, database: replicaName(url) }, 'gateway database connection error'));
      pool.on('connect', shareEmbeddedSession);
      return pool;
    };
    this.pool = open(databaseUrl);
    if (replicas.urls.length > 0) {
      this.replicaPools = replicas.urls.map(open);
      this.routing = new ReadRouting<pg.Pool>({
        primary: this.pool,
        replicas: replicas.urls.map((url, i) => ({
          name: replicaName(url),
          handle: this.replicaPools[i],
          query: (sql) => this.replicaPools[i].query(sql).then((r) => r.rows as Array<Record<string, unknown>>),
        })),
        maxLagSeconds: replicas.maxLagSeconds,
        logger,
        primaryPosition: () => this.pool.query<{ lsn: string }>(WAL_POSITION_SQL).then((r) => r.rows[0].lsn),
      });
    }
  }

  /**
   * After messages may have been missed (a Redis reconnection): every read from now on must show at
   * least what the primary has written by now (without replicas, nothing to do).
   */
  async catchUpFloor(): Promise<void> {
    await this.routing?.raiseFloor();
  }

  /** A write of the station committed at `lsn` (heard from another process): reads of it must show it. */
  heard(stationId: string, lsn: string): void {
    this.routing?.heard(stationId, lsn);
  }

  async stationGate(stationId: string): Promise<StationGate | null> {
    const { rows } = await this.query<{ active: boolean; public_online: boolean; realtime: boolean | null; stream_urls: unknown }>(
      `SELECT active, public_online, (modules->>'realtime')::boolean AS realtime, profile->'streamUrls' AS stream_urls FROM stations WHERE id = $1`,
      [stationId],
    );
    const row = rows[0];
    if (!row) return null;
    return {
      active: row.active,
      publicOnline: row.public_online,
      realtime: row.realtime ?? DEFAULT_MODULES.realtime,
      streams: streamLatencies(row.stream_urls),
    };
  }

  /** The feed kinds the station's modules switch off (after an admin change); null when the station is gone. */
  async hiddenKinds(stationId: string): Promise<FeedKind[] | null> {
    const { rows } = await this.query<{ modules: Partial<Modules> | null }>('SELECT modules FROM stations WHERE id = $1', [stationId]);
    return rows[0] ? hiddenKinds(rows[0].modules) : null;
  }

  /**
   * Every live row of a station, with data for the non-content kinds and for the `contentBodies` most
   * recent content rows (older content rows come without data: the gateway only needs to know they exist),
   * and every tombstone still kept (without data): a client resuming from a cursor learns of those deletes.
   */
  async currentRows(stationId: string, contentBodies: number): Promise<CurrentRows> {
    const { rows } = await this.query<RowRecord>(
      `SELECT s.feed_seq, s.feed_epoch, s.feed_pruned_seq, s.modules, r.kind, r.entry, r.seq, r.deleted, r.updated_at,
              (NOT r.deleted AND (r.kind <> 'content' OR r.rank <= $2)) AS has_data,
              CASE WHEN NOT r.deleted AND (r.kind <> 'content' OR r.rank <= $2) THEN r.data END AS data
         FROM stations s
         LEFT JOIN LATERAL (
           SELECT kind, entry, seq, data, deleted, updated_at,
                  row_number() OVER (PARTITION BY deleted, kind = 'content' ORDER BY seq DESC) AS rank
             FROM feed_rows
            WHERE station_id = s.id
         ) r ON true
        WHERE s.id = $1
        ORDER BY r.seq`,
      [stationId, contentBodies],
    );
    return { ...toRows(rows), hidden: hiddenKinds(rows[0]?.modules ?? null) };
  }

  /** Rows changed after `afterSeq`, tombstones included, in sequence order. */
  async rowsSince(stationId: string, afterSeq: number): Promise<RowsAtSeq> {
    const { rows } = await this.query<RowRecord>(
      `SELECT s.feed_seq, s.feed_epoch, s.feed_pruned_seq, r.kind, r.entry, r.seq, r.deleted, r.updated_at, true AS has_data, r.data
         FROM stations s
         LEFT JOIN feed_rows r ON r.station_id = s.id AND r.seq > $2
        WHERE s.id = $1
        ORDER BY r.seq`,
      [stationId, afterSeq],
    );
    return toRows(rows);
  }

  /**
   * Live content rows changed after `afterSeq`, with their data: the bodies a resume needs that the
   * gateway does not hold. One read serves every client of a reconnect burst (contentBodies.ts).
   */
  async contentSince(stationId: string, afterSeq: number): Promise<StoredRow[]> {
    const { rows } = await this.query<RowRecord>(
      `SELECT NULL AS feed_seq, kind, entry, seq, deleted, updated_at, true AS has_data, data
         FROM feed_rows
        WHERE station_id = $1 AND kind = 'content' AND NOT deleted AND seq > $2
        ORDER BY seq`,
      [stationId, afterSeq],
    );
    return rows.map(liveContentRow);
  }

  /** The `limit` most recent live content rows with their data (to refill the gateway's content bodies). */
  async recentContent(stationId: string, limit: number): Promise<StoredRow[]> {
    const { rows } = await this.query<RowRecord>(
      `SELECT NULL AS feed_seq, kind, entry, seq, deleted, updated_at, true AS has_data, data
         FROM feed_rows
        WHERE station_id = $1 AND kind = 'content' AND NOT deleted
        ORDER BY seq DESC
        LIMIT $2`,
      [stationId, limit],
    );
    return rows.map(liveContentRow);
  }

  /**
   * The versions of the station's now-playing and on-air rows written since `since`, and the newest one
   * before it (what was current then): what a delayed connection may have to be given, read once per
   * station by a gateway whose first delayed connection arrives (delay.ts). `feed_rows` holds only the
   * current rows; every version is kept in `feed_row_versions` by a trigger on it (its migration).
   */
  async heardVersions(stationId: string, since: Date): Promise<StoredRow[]> {
    const { rows } = await this.query<RowRecord>(
      `SELECT NULL AS feed_seq, kind, entry, seq, deleted, updated_at, true AS has_data, data
         FROM feed_row_versions v
        WHERE station_id = $1
          AND (updated_at >= $2
               OR seq = (SELECT max(seq) FROM feed_row_versions n
                          WHERE n.station_id = $1 AND n.kind = v.kind AND n.entry = v.entry AND n.updated_at < $2))
        ORDER BY seq`,
      [stationId, since],
    );
    return rows.map((r) => ({
      kind: r.kind as FeedKind,
      entry: r.entry,
      seq: Number(r.seq),
      deleted: r.deleted,
      data: r.data,
      updatedAt: r.updated_at.toISOString(),
    }));
  }

  /** `values[0]` is the station every query here reads. */
  private query<R extends pg.QueryResultRow>(text: string, values: unknown[]): Promise<pg.QueryResult<R>> {
    this.queries++;
    const routing = this.routing;
    if (routing === null) return this.pool.query<R>(text, values);
    return routing.run(String(values[0]), (pool) => pool.query<R>(text, values)).then((done) => done.value);
  }

  async close(): Promise<void> {
    this.routing?.close();
    await Promise.all([this.pool.end(), ...this.replicaPools.map((pool) => pool.end())]);
  }
}

/** A live content row as the gateway keeps it. */
function liveContentRow(r: RowRecord): StoredRow {
  return { kind: 'content', entry: r.entry, seq: Number(r.seq), deleted: false, data: r.data, updatedAt: r.updated_at.toISOString() };
}
