import type { Station } from '../stations/model.ts';
import { CONTRACT_VERSION } from '../stations/presenter.ts';
import { momentOf, type TrackRow } from './model.ts';
import type { NowPlaying, TrackHistory } from './schemas.ts';

// One presenter for the now-playing resource: the REST response, the `now-playing` feed row and
// GraphQL all use it, so the three never drift apart.

export type PresentedTrack = NonNullable<NowPlaying['track']>;
export type PresentedHistoryItem = TrackHistory['items'][number];

/** Only HTTPS artwork reaches listeners (the contract types `artworkUrl` as HTTPS). */
export function isHttpsUrl(value: string | null | undefined): value is string {
  if (!value) return false;
  try {
    return new URL(value).protocol === 'https:';
  } catch {
    return false;
  }
}

const iso = (value: Date | null): string | null => (value ? value.toISOString() : null);

/** The track fields of an observation. `sourceTrackId` is never exposed. */
export function presentTrack(row: TrackRow): PresentedTrack {
  return {
    artist: row.artist,
    title: row.title,
    album: row.album,
    durationSeconds: row.duration_seconds,
    ...(isHttpsUrl(row.artwork_url) ? { artworkUrl: row.artwork_url } : {}),
    isPlaying: row.is_playing,
    observedAt: iso(row.observed_at),
    receivedAt: row.received_at.toISOString(),
  };
}

export function presentHistoryItem(row: TrackRow): PresentedHistoryItem {
  return { id: row.id, ...presentTrack(row) };
}

type StationView = Pick<Station, 'id' | 'timezone' | 'nowPlayingFreshnessSeconds'>;

/**
 * The now-playing response for the latest observation (or none), with timing and freshness derived
 * at `now` (decisions.md, "Listener reads": freshness, elapsedSeconds, endsAt).
 */
export function presentNowPlaying(station: StationView, latest: TrackRow | null, now: Date): NowPlaying {
  const base = { contractVersion: CONTRACT_VERSION, stationId: station.id, timezone: station.timezone };
  if (!latest) {
    return {
      ...base,
      track: null,
      elapsedSeconds: null,
      endsAt: null,
      freshness: { status: 'empty', thresholdSeconds: null, ageSeconds: null, observedAt: null, receivedAt: null },
    };
  }
  const moment = momentOf(latest);
  // An observedAt slightly ahead of the server clock (allowed up to 300 s) counts as age 0.
  const ageSeconds = Math.max(0, Math.floor((now.getTime() - moment.getTime()) / 1000));
  const threshold = station.nowPlayingFreshnessSeconds;
  const timed = latest.is_playing && latest.duration_seconds !== null;
  return {
    ...base,
    track: presentTrack(latest),
    elapsedSeconds: timed ? Math.floor(Math.min(ageSeconds, latest.duration_seconds as number)) : null,
    endsAt: timed ? new Date(moment.getTime() + Math.round((latest.duration_seconds as number) * 1000)).toISOString() : null,
    freshness: {
      status: ageSeconds <= threshold ? 'fresh' : 'stale',
      thresholdSeconds: threshold,
      ageSeconds,
      observedAt: iso(latest.observed_at),
      receivedAt: latest.received_at.toISOString(),
    },
  };
}
