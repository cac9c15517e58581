import { LoadingCache } from '../../lib/cache.ts';
import type { Logger } from '../../lib/logger.ts';
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
  // Loading caches: a station read all the time is reloaded before its TTL runs out, once, instead of
  // every request of the moment it expires querying it (lib/cache.ts).
  private readonly bySlug: LoadingCache<string, Station | null>;
  private readonly byId: LoadingCache<string, Station | null>;
  constructor(db: Db, invalidation: Invalidation, logger?: Logger) {
    const failed = (err: unknown) => logger?.warn({ err }, 'could not reload a station');
    this.bySlug = new LoadingCache(10_000, (slug) => findStationBySlug(db, slug), failed);
    this.byId = new LoadingCache(10_000, (id) => findStationById(db, id), failed);
    invalidation.on('station', (id) => this.drop(id));
  }

  /** The cached entry without waiting: a station, null (known not to exist), or undefined (not cached). */
  peekBySlug(slug: string, realMs?: number): Station | null | undefined {
    return this.bySlug.peek(slug, realMs);
  }

  peekById(id: string): Station | null | undefined {
    return this.byId.peek(id);
  }

  bySlugOrNull(slug: string): Promise<Station | null> {
    return this.bySlug.getOrLoad(slug);
  }

  byIdOrNull(id: string): Promise<Station | null> {
    return this.byId.getOrLoad(id);
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
