import type { Knex } from 'knex';
import type { Db } from '../../lib/db.ts';
import { matchKey } from '../../lib/matchKey.ts';
import { artFields } from '../artwork/trackArt.ts';
import type { TrackRow } from '../nowPlaying/model.ts';
import { CATALOGUE_DAYS, type RefusalReason } from './model.ts';
import type { InboxSetting } from './setting.ts';
import { searchKey } from './text.ts';

// The request catalogue and the request policy (docs/inbox.md, "The request policy" and "The request
// catalogue"). The catalogue is the station's play log seen through the inbox's eyes: each play with its
// track's match keys (compared as names are everywhere: lib/matchKey.ts) and search keys (accents
// dropped). It is caught up from the observations before every read that needs it — the observations
// stored since the last one, by receipt order, usually none — so a track that started a second ago
// counts, and there is no worker or ingest hook to keep in step.

const BATCH = 1000;

/** A track as the policy compares it: match keys of its artist ('' when unknown) and title. */
export interface TrackKey {
  artistKey: string;
  titleKey: string;
}

export const trackKey = (artist: string | null, title: string): TrackKey => ({
  artistKey: artist === null ? '' : matchKey(artist),
  titleKey: matchKey(title),
});

interface ObservationRead {
  id: string;
  artist: string | null;
  title: string | null;
  sort_at: Date;
  receipt_seq: string;
  is_playing: boolean;
  accepted: boolean;
}

/**
 * Reads the station's observations stored since the catalogue's mark into `inbox_plays`. One station's
 * observations are stored one at a time (the ingest locks the station), so receipt order is commit order
 * and the mark never skips one. Two catch-ups at once insert the same plays once.
 */
export async function catchUpCatalogue(db: Db, stationId: string, now: Date): Promise<void> {
  const mark = await db('inbox_catalogue_marks').where({ station_id: stationId }).first<{ receipt_seq: string } | undefined>('receipt_seq');
  let after: string;
  if (mark) after = mark.receipt_seq;
  else {
    // A first catch-up starts with the catalogue's window.
    const since = new Date(now.getTime() - CATALOGUE_DAYS * 86_400_000);
    const first = await db('observations')
      .where({ station_id: stationId })
      .andWhere('sort_at', '>=', since)
      .min<{ seq: string | null }>('receipt_seq as seq')
      .first();
    after = first?.seq !== null && first?.seq !== undefined ? String(BigInt(first.seq) - 1n) : '0';
  }
  for (;;) {
    const rows: ObservationRead[] = await db('observations')
      .where({ station_id: stationId })
      .andWhere('receipt_seq', '>', after)
      .orderBy('receipt_seq')
      .limit(BATCH)
      .select('id', 'artist', 'title', 'sort_at', 'receipt_seq', 'is_playing', 'accepted');
    if (rows.length === 0) return;
    const plays = rows
      .filter((row) => row.title !== null && row.is_playing && row.accepted)
      .map((row) => {
        const key = trackKey(row.artist, row.title as string);
        return {
          observation_id: row.id,
          station_id: stationId,
          artist_key: key.artistKey,
          title_key: key.titleKey,
          artist_search: row.artist === null ? '' : searchKey(row.artist),
          title_search: searchKey(row.title as string),
          played_at: row.sort_at,
        };
      });
    if (plays.length) await db('inbox_plays').insert(plays).onConflict('observation_id').ignore();
    after = String(rows[rows.length - 1].receipt_seq);
    await db.raw(
      `INSERT INTO inbox_catalogue_marks (station_id, receipt_seq) VALUES (?, ?)
       ON CONFLICT (station_id) DO UPDATE SET receipt_seq = GREATEST(inbox_catalogue_marks.receipt_seq, EXCLUDED.receipt_seq)`,
      [stationId, after],
    );
    if (rows.length < BATCH) return;
  }
}

export interface Verdict {
  requestable: boolean;
  reason?: RefusalReason;
  retryAfterSeconds?: number;
}

const secondsUntil = (at: number, now: Date): number => Math.max(1, Math.ceil((at - now.getTime()) / 1000));

/**
 * The policy's verdict on requests for `tracks` now, in order: the track played within
 * `trackRepeatMinutes`, else its artist within `artistRepeatMinutes` (both lifted by time), else a
 * pending or shown request for it received since its last play (other than `exceptMessageId`: the
 * studio asks about a stored request without counting that one). One statement for any number of tracks.
 */
export async function verdicts(
  db: Db | Knex.Transaction,
  stationId: string,
  setting: InboxSetting,
  tracks: TrackKey[],
  now: Date,
  exceptMessageId?: string,
): Promise<Verdict[]> {
  if (tracks.length === 0) return [];
  const except = exceptMessageId === undefined ? '' : 'AND m.id <> ?';
  const artistSince = new Date(now.getTime() - setting.artistRepeatMinutes * 60_000);
  const { rows } = await db.raw<{ rows: Array<{ i: number; track_at: Date | null; artist_at: Date | null; requested_at: Date | null }> }>(
    `SELECT t.i,
       (SELECT max(p.played_at) FROM inbox_plays p
         WHERE p.station_id = ? AND p.artist_key = t.artist_key AND p.title_key = t.title_key) AS track_at,
       (SELECT max(p.played_at) FROM inbox_plays p
         WHERE p.station_id = ? AND p.artist_key = t.artist_key AND t.artist_key <> '' AND p.played_at > ?) AS artist_at,
       (SELECT max(m.created_at) FROM inbox_messages m
         WHERE m.station_id = ? AND m.kind = 'request' AND m.status IN ('pending', 'shown')
           AND m.artist_key = t.artist_key AND m.title_key = t.title_key ${except}) AS requested_at
     FROM unnest(?::text[], ?::text[]) WITH ORDINALITY AS t(artist_key, title_key, i)`,
    [
      stationId,
      stationId,
      artistSince,
      stationId,
      ...(exceptMessageId === undefined ? [] : [exceptMessageId]),
      tracks.map((t) => t.artistKey),
      tracks.map((t) => t.titleKey),
    ],
  );
  const out: Verdict[] = tracks.map(() => ({ requestable: true }));
  for (const row of rows) {
    const trackAt = row.track_at ? new Date(row.track_at).getTime() : null;
    const trackFree = trackAt === null ? 0 : trackAt + setting.trackRepeatMinutes * 60_000;
    const artistFree = row.artist_at ? new Date(row.artist_at).getTime() + setting.artistRepeatMinutes * 60_000 : 0;
    const requestedAt = row.requested_at ? new Date(row.requested_at).getTime() : null;
    const verdict = out[Number(row.i) - 1];
    if (setting.trackRepeatMinutes > 0 && trackFree > now.getTime())
      Object.assign(verdict, { requestable: false, reason: 'recently-played', retryAfterSeconds: secondsUntil(trackFree, now) });
    else if (setting.artistRepeatMinutes > 0 && artistFree > now.getTime())
      Object.assign(verdict, { requestable: false, reason: 'artist-recently-played', retryAfterSeconds: secondsUntil(artistFree, now) });
    else if (requestedAt !== null && (trackAt === null || requestedAt > trackAt))
      Object.assign(verdict, { requestable: false, reason: 'already-requested' });
  }
  return out;
}

const likePattern = (key: string): string => `%${key.replace(/[\\%_]/g, '\\$&')}%`;

interface CatalogueRow {
  artist_key: string;
  title_key: string;
  plays: string;
  last_played_at: Date;
  last_id: string;
}

/**
 * `requestable`: the distinct tracks played in the last 90 days whose artist or title holds `q` (accents
 * ignored), most played first (then most recently), each with how its latest play was named and shown,
 * and the policy's verdict.
 */
export async function requestableTracks(db: Db, stationId: string, setting: InboxSetting, q: string, limit: number, now: Date) {
  const key = searchKey(q);
  if (key === '') return { tracks: [] };
  await catchUpCatalogue(db, stationId, now);
  const pattern = likePattern(key);
  const groups: CatalogueRow[] = (
    await db.raw<{ rows: CatalogueRow[] }>(
      `SELECT artist_key, title_key, count(*) AS plays, max(played_at) AS last_played_at,
              (array_agg(observation_id::text ORDER BY played_at DESC))[1] AS last_id
         FROM inbox_plays
        WHERE station_id = ? AND played_at >= ? AND (artist_search LIKE ? OR title_search LIKE ?)
        GROUP BY artist_key, title_key
        ORDER BY count(*) DESC, max(played_at) DESC, artist_key, title_key
        LIMIT ?`,
      [stationId, new Date(now.getTime() - CATALOGUE_DAYS * 86_400_000), pattern, pattern, limit],
    )
  ).rows;
  if (groups.length === 0) return { tracks: [] };
  const latest = new Map<string, TrackRow>(
    (
      await db('observations')
        .whereIn(
          'id',
          groups.map((g) => g.last_id),
        )
        .select('id', 'artist', 'title', 'artwork_url', 'catalogue_url', 'artwork_view')
    ).map((row: TrackRow) => [row.id, row]),
  );
  const judged = await verdicts(
    db,
    stationId,
    setting,
    groups.map((g) => ({ artistKey: g.artist_key, titleKey: g.title_key })),
    now,
  );
  return {
    tracks: groups.map((group, i) => {
      const play = latest.get(group.last_id);
      const art = play ? artFields(play) : {};
      return {
        artist: play?.artist ?? '',
        title: play?.title ?? '',
        ...('artworkUrl' in art && art.artworkUrl ? { artworkUrl: art.artworkUrl } : {}),
        lastPlayedAt: new Date(group.last_played_at).toISOString(),
        ...judged[i],
      };
    }),
  };
}
