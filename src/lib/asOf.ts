import { createHash } from 'node:crypto';
import type { Db } from './db.ts';
import type { Invalidation } from './invalidation.ts';
import type { ReadArea, ReadAreas } from './readCache.ts';

/**
 * When an answer that carries `asOf` (the current broadcast, `live`) was first computed, kept for as long
 * as the answer shows the same (docs/schedule.md, "asOf"). A recomputation — the read cache's safety
 * age, an invalidation that changed nothing this answer shows, another web process, a restarted one —
 * that shows the same takes the kept instant, so the bytes and the ETag stay the same and an app polling
 * with `If-None-Match` keeps getting 304 until the answer really changes.
 *
 * Kept in Postgres (table `read_as_of`), so every process and every restart agrees, and in this process'
 * memory while no invalidation of the areas the answer shows came in: a recomputation only because the
 * safety age ran out costs no query. An answer exact for less than a second (now-playing's elapsed time
 * moves each second) is not kept: its `asOf` is the time of the computation, as it would change anyway.
 */
export class AsOfMemo {
  private readonly db: Db;
  /** The instants this process knows to be shared, by station then key. */
  private readonly known = new Map<string, Map<string, { areas: readonly ReadArea[]; digest: string; asOf: Date }>>();

  constructor(db: Db, invalidation?: Pick<Invalidation, 'on'>) {
    this.db = db;
    if (invalidation) {
      invalidation.on('reads', (id) => {
        const sep = id.lastIndexOf(':');
        this.forget(id.slice(0, sep), id.slice(sep + 1) as ReadArea);
      });
      invalidation.on('station', (id) => this.forget(id));
    }
  }

  /**
   * The `asOf` of an answer of `key` that shows `shows` (its bytes without `asOf`), computed at `now` and
   * exact until `validUntil` (ms, the service clock): the instant the same answer was first computed, or
   * `now` when it is new. Never fails the read: with the store out of reach it answers `now`.
   */
  async keep(key: string, stationId: string, areas: ReadAreas, shows: string, now: Date, validUntil: number): Promise<Date> {
    if (validUntil - now.getTime() < 1000) return now;
    const digest = createHash('sha256').update(shows).digest('base64url').slice(0, 22);
    let station = this.known.get(stationId);
    const local = station?.get(key);
    if (local !== undefined && local.digest === digest) return local.asOf;
    let asOf: Date;
    try {
      asOf = await this.shared(key, stationId, digest, now);
    } catch {
      return now;
    }
    if (!station) this.known.set(stationId, (station = new Map()));
    station.set(key, { areas: typeof areas === 'string' ? [areas] : areas, digest, asOf });
    return asOf;
  }

  /** Drops what this process knows of a station's answers showing `area` (all of them without one). */
  forget(stationId: string, area?: ReadArea): void {
    const station = this.known.get(stationId);
    if (!station) return;
    for (const [key, entry] of station) if (area === undefined || entry.areas.includes(area)) station.delete(key);
    if (station.size === 0) this.known.delete(stationId);
  }

  /** The stored instant when it is for the same answer; else `now`, stored (the first writer wins). */
  private async shared(key: string, stationId: string, digest: string, now: Date): Promise<Date> {
    const stored = await this.db('read_as_of').where({ key }).first<{ digest: string; as_of: Date } | undefined>('digest', 'as_of');
    if (stored?.digest === digest) return stored.as_of;
    const { rows } = await this.db.raw<{ rows: Array<{ as_of: Date }> }>(
      `INSERT INTO read_as_of (key, station_id, digest, as_of) VALUES (?, ?, ?, ?)
       ON CONFLICT (key) DO UPDATE SET digest = EXCLUDED.digest, as_of = EXCLUDED.as_of
         WHERE read_as_of.digest <> EXCLUDED.digest
       RETURNING as_of`,
      [key, stationId, digest, now],
    );
    if (rows.length > 0) return rows[0].as_of;
    // Another process stored the same answer a moment ago: its instant stands.
    const again = await this.db('read_as_of').where({ key, digest }).first<{ as_of: Date } | undefined>('as_of');
    return again?.as_of ?? now;
  }
}
