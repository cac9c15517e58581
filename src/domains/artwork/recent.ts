import type { Services } from '../../services.ts';
import { urlHash } from './checks.ts';
import { type ArtworkCheckRow, type ArtworkPinRow } from './model.ts';
import { matchKey } from '../../lib/matchKey.ts';
import { pinFor } from './resolve.ts';
import type { RecentTracks } from './schemas.ts';
import type { TrackArtView } from './trackArt.ts';

// The review (docs/now-playing.md#how-an-operator-fixes-wrong-art-in-one-call): the distinct tracks played in
// the last 7 days, newest first, with the art listeners saw and why each refused source was refused.

const WEEK_MS = 7 * 24 * 3600 * 1000;

export async function recentTracks(svc: Services, stationId: string, limit: number): Promise<RecentTracks> {
  const since = new Date(svc.clock.now().getTime() - WEEK_MS);
  const groups = (await svc
    .db('observations')
    .where({ station_id: stationId, is_playing: true })
    .andWhere('sort_at', '>=', since)
    .groupBy('artist', 'title')
    .select('artist', 'title')
    .max({ last: 'sort_at' })
    .count({ plays: '*' })
    .orderBy('last', 'desc')
    .limit(limit)) as Array<{ artist: string | null; title: string | null; last: Date; plays: string | number }>;
  const pins: ArtworkPinRow[] = await svc.db('artwork_pins').where({ station_id: stationId });
  const tracks: RecentTracks['tracks'] = [];
  for (const group of groups) {
    const latest = await svc
      .db('observations')
      .where({ station_id: stationId, is_playing: true, artist: group.artist, title: group.title })
      .orderBy('sort_at', 'desc')
      .first<{ artwork_url: string | null; catalogue_url: string | null; artwork_view: TrackArtView | null }>(
        'artwork_url',
        'catalogue_url',
        'artwork_view',
      );
    const pin = pinFor(pins, group.artist !== null ? matchKey(group.artist) : null, group.title !== null ? matchKey(group.title) : null);
    const named = [
      pin?.image_url ? { source: 'operator' as const, url: pin.image_url } : null,
      latest?.artwork_url ? { source: 'ingest' as const, url: latest.artwork_url } : null,
      latest?.catalogue_url ? { source: 'catalogue' as const, url: latest.catalogue_url } : null,
    ].filter((n) => n !== null);
    const rejected: RecentTracks['tracks'][number]['rejected'] = [];
    for (const { source, url } of named) {
      const check = await svc
        .db<ArtworkCheckRow>('artwork_checks')
        .where({ station_id: stationId, url_hash: urlHash(url) })
        .first();
      if (check?.status === 'rejected' && check.reason)
        rejected.push({ source, url, reason: check.reason, at: check.checked_at.toISOString() });
    }
    if (pin?.image_kind === 'version' && pin.status === 'rejected' && pin.reason)
      rejected.push({ source: 'operator', url: `version:${pin.image_version_id}`, reason: pin.reason, at: pin.updated_at.toISOString() });
    tracks.push({
      artist: group.artist,
      title: group.title,
      lastPlayedAt: new Date(group.last).toISOString(),
      plays: Number(group.plays),
      artwork: latest?.artwork_view?.artwork ?? null,
      rejected,
    });
  }
  return { tracks };
}
