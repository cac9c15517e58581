import type { Knex } from 'knex';
import { invalidateReads } from '../../lib/readCache.ts';
import type { Services } from '../../services.ts';
import type { Station } from '../stations/model.ts';
import { requestLookup } from './catalogue/ask.ts';
import type { CheckedSource } from './model.ts';
import { requestCheck } from './requests.ts';
import { RESOLVABLE_COLUMNS, chainContext, resolveTrackArt, type ResolvableObservation } from './resolve.ts';
import { shownArtChanged } from './shown.ts';
import { artFields, type TrackArtView } from './trackArt.ts';

// Writes the resolved art of observations (the views listener reads present as they are), then tells
// the features showing them whose art shows differently (shown.ts: now-playing's follow-up frame).
// Checks still due are queued for the worker.

type Stored = ResolvableObservation & {
  artwork_url: string | null;
  artwork_view: TrackArtView | null;
  artist_key: string | null;
  title_key: string | null;
};

/** Resolves the station's observations selected by `where` again; the number whose art changed. */
export async function refreshTrackArt(svc: Services, station: Station, where: (query: Knex.QueryBuilder) => void): Promise<number> {
  const setting = station.artwork;
  const ctx = await chainContext(svc.db, station, setting, svc.config.publicBaseUrl, svc.clock.now());
  const query = svc
    .db('observations')
    .select([...RESOLVABLE_COLUMNS, 'artwork_view', 'artist_key', 'title_key'])
    .where('station_id', station.id);
  where(query);
  const rows = (await query) as Stored[];
  const changed = new Set<string>();
  const shownChanged = new Set<string>();
  const due = new Map<string, { url: string; source: CheckedSource }>();
  for (const row of rows) {
    const resolution = await resolveTrackArt(ctx, row);
    for (const check of resolution.due) due.set(check.url, check);
    if (resolution.wantsLookup) requestLookup(svc, row.id);
    const same =
      JSON.stringify(resolution.view) === JSON.stringify(row.artwork_view) &&
      resolution.artistKey === row.artist_key &&
      resolution.titleKey === row.title_key;
    if (same) continue;
    // Written only if the sources it was resolved from still stand (a catalogue find filled meanwhile
    // is resolved by its own job).
    await svc
      .db('observations')
      .where({ id: row.id })
      .whereRaw('catalogue_url IS NOT DISTINCT FROM ?', [row.catalogue_url])
      .update({ artwork_view: JSON.stringify(resolution.view), artist_key: resolution.artistKey, title_key: resolution.titleKey });
    changed.add(row.id);
    const before = JSON.stringify(artFields(row));
    if (before !== JSON.stringify(artFields({ ...row, artwork_view: resolution.view }))) shownChanged.add(row.id);
  }
  for (const check of due.values()) requestCheck(svc, station.id, check.url, check.source);
  if (changed.size === 0) return 0;
  await invalidateReads(svc, station.id, 'nowPlaying');
  if (shownChanged.size > 0) await shownArtChanged(svc, station, shownChanged);
  return changed.size;
}
