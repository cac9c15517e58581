import { TtlCache } from '../../lib/cache.ts';
import type { Db } from '../../lib/db.ts';
import type { Invalidation } from '../../lib/invalidation.ts';
import { NotFoundError } from '../../lib/errors.ts';
import type { Station } from './model.ts';
import { findStationById, findStationBySlug } from './queries.ts';

/**
 * Listener routes resolve the station on every request; this keeps it in memory. Admin writes
 * invalidate it everywhere (locally at once, other processes through Redis), so switches apply on the
 * next read; the TTL only bounds the damage of a lost invalidation message.
 */
export class StationCache {
  private readonly bySlug = new TtlCache<string, Station | null>(10_000);
  private readonly byId = new TtlCache<string, Station | null>(10_000);
  private readonly db: Db;
  constructor(db: Db, invalidation: Invalidation) {
    this.db = db;
    invalidation.on('station', (id) => this.drop(id));
  }

  /** The cached entry without waiting: a station, null (known not to exist), or undefined (not cached). */
  peekBySlug(slug: string): Station | null | undefined {
    return this.bySlug.get(slug);
  }

  peekById(id: string): Station | null | undefined {
    return this.byId.get(id);
  }

  async bySlugOrNull(slug: string): Promise<Station | null> {
    const hit = this.bySlug.get(slug);
    if (hit !== undefined) return hit;
    const station = await findStationBySlug(this.db, slug);
    this.bySlug.set(slug, station);
    return station;
  }

  async byIdOrNull(id: string): Promise<Station | null> {
    const hit = this.byId.get(id);
    if (hit !== undefined) return hit;
    const station = await findStationById(this.db, id);
    this.byId.set(id, station);
    return station;
  }

  /** The station by id, or 404 NOT_FOUND (admin routes that name a station). */
  async require(id: string): Promise<Station> {
    const station = await this.byIdOrNull(id);
    if (!station) throw new NotFoundError('Station not found.');
    return station;
  }

  private drop(id: string): void {
    this.byId.delete(id);
    // A slug may have moved to or from this station: drop negative entries too.
    this.bySlug.deleteWhere((station) => station === null || station.id === id);
  }
}
