import { createHash } from 'node:crypto';
import { inTransaction } from '../../../lib/db.ts';
import { keys } from '../../../lib/keys.ts';
import { invalidateReads } from '../../../lib/readCache.ts';
import { normalise, type Track } from '../../../lib/trackMatch.ts';
import type { Services } from '../../../services.ts';
import { requestResolve } from '../requests.ts';
import { shownArtChanged } from '../shown.ts';
import { notAsked } from './ask.ts';
import { ProviderError } from './http.ts';
import { pacing } from './pacing.ts';
import { PROVIDERS, type ArtworkProvider } from './providers.ts';

// Artwork lookup for a stored observation (docs/now-playing.md#artwork-worker): cached hits and
// misses, providers in order, the stored track filled and a follow-up `now-playing` row published.

/** A found cover is kept this long. */
export const HIT_TTL_SECONDS = 30 * 24 * 3600;
/** A track no catalogue knows is asked about again after this long (catalogues grow). */
export const MISS_RETRY_MS = 6 * 3600 * 1000;

type CacheEntry = { url: string } | { miss: true; retryAt: number };

export class ArtworkUnavailableError extends Error {}

export type ArtworkResult =
  | { status: 'skipped'; reason: string }
  | { status: 'hit'; url: string; source: string; filled: boolean }
  | { status: 'miss'; source: 'cache' | 'lookup' };

export const cacheKey = (track: Track): string =>
  keys.artwork(
    createHash('sha256')
      .update(`${track.artist ? normalise(track.artist) : ''}\n${normalise(track.title)}`)
      .digest('hex'),
  );

async function readCache(svc: Services, key: string): Promise<CacheEntry | null> {
  const raw = await svc.redis.get(key);
  if (!raw) return null;
  try {
    return JSON.parse(raw) as CacheEntry;
  } catch {
    return null;
  }
}

/** Asks each provider in turn; null when none knows the track; throws when none knew and one failed. */
async function lookUp(svc: Services, track: Track, providers: ArtworkProvider[]): Promise<{ url: string; source: string } | null> {
  const failures: string[] = [];
  for (const provider of providers) {
    try {
      const url = await provider.find(track, { config: svc.config.artwork, pace: pacing(svc.redis) });
      if (url) return { url, source: provider.name };
    } catch (err) {
      if (!(err instanceof ProviderError)) throw err;
      failures.push(err.message);
      svc.logger.warn({ provider: provider.name, err: err.message }, 'artwork provider failed');
    }
  }
  // A failure is not knowledge: cache nothing and let the job retry.
  if (failures.length) throw new ArtworkUnavailableError(failures.join('; '));
  return null;
}

/** The columns of a stored observation the look-up reads. */
interface Candidate {
  id: string;
  station_id: string;
  artist: string | null;
  title: string | null;
  artwork_url: string | null;
  catalogue_url: string | null;
}

/**
 * Fills the observation's catalogue find (only if still unknown; the ingest's own URL stays in
 * artwork_url) and tells the features showing it (shown.ts: now-playing republishes when it is the
 * latest). The find is then checked and resolved like any source, which sends the follow-up row with
 * the kept art.
 */
async function fill(svc: Services, observation: Candidate, url: string): Promise<boolean> {
  const station = await svc.stations.byIdOrNull(observation.station_id);
  return inTransaction(svc.db, async (tx) => {
    const updated = await tx
      .trx('observations')
      .where({ id: observation.id })
      .whereNull('catalogue_url')
      .update({ catalogue_url: url, artwork_view: null });
    // Until it is resolved again the track shows the find as reported (artwork_view null).
    if (updated) {
      tx.afterCommit(() => invalidateReads(svc, observation.station_id, 'nowPlaying'));
      tx.afterCommit(() => requestResolve(svc, observation.id));
    }
    if (!updated || !station) return updated > 0;
    await shownArtChanged(svc, station, new Set([observation.id]), tx);
    return true;
  });
}

export async function lookUpArtwork(
  svc: Services,
  observationId: string,
  providers: ArtworkProvider[] = PROVIDERS,
): Promise<ArtworkResult> {
  const observation = await svc
    .db('observations')
    .where({ id: observationId })
    .first<Candidate | undefined>('id', 'station_id', 'artist', 'title', 'artwork_url', 'catalogue_url');
  if (!observation) return { status: 'skipped', reason: 'observation gone' };
  const station = await svc.stations.byIdOrNull(observation.station_id);
  const reason = notAsked(station, observation);
  if (reason) return { status: 'skipped', reason };

  const track: Track = { artist: observation.artist, title: observation.title as string };
  const key = cacheKey(track);
  const now = svc.clock.now().getTime();
  const cached = await readCache(svc, key);
  if (cached && 'url' in cached) {
    return { status: 'hit', url: cached.url, source: 'cache', filled: await fill(svc, observation, cached.url) };
  }
  if (cached && cached.retryAt > now) return { status: 'miss', source: 'cache' };

  const found = await lookUp(svc, track, providers);
  if (!found) {
    const entry: CacheEntry = { miss: true, retryAt: now + MISS_RETRY_MS };
    // Redis drops the entry a day after it stopped mattering; the clock check above decides retries.
    await svc.redis.set(key, JSON.stringify(entry), 'EX', Math.ceil(MISS_RETRY_MS / 1000) + 86400);
    return { status: 'miss', source: 'lookup' };
  }
  await svc.redis.set(key, JSON.stringify({ url: found.url } satisfies CacheEntry), 'EX', HIT_TTL_SECONDS);
  return { status: 'hit', url: found.url, source: found.source, filled: await fill(svc, observation, found.url) };
}
