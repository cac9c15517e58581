import { artFields } from '../artwork/trackArt.ts';
import type { Station } from '../stations/model.ts';
import { CONTRACT_VERSION } from '../stations/presenter.ts';
import { momentOf, type TrackRow } from './model.ts';
import type { NowPlaying, TrackHistory } from './schemas.ts';

// One presenter for the now-playing resource: the REST response, the `now-playing` feed row and
// GraphQL all use it, so the three never drift apart.

export type PresentedTrack = NonNullable<NowPlaying['track']>;
export type PresentedHistoryItem = TrackHistory['items'][number];

const iso = (value: Date | null): string | null => (value ? value.toISOString() : null);

/** The track fields of an observation. `sourceTrackId` is never exposed. */
export function presentTrack(row: TrackRow): PresentedTrack {
  return {
    artist: row.artist,
    title: row.title,
    album: row.album,
    durationSeconds: row.duration_seconds,
    ...artFields(row),
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
 * at `now` (freshness, elapsedSeconds, endsAt: docs/now-playing.md#freshness-and-timing). For a stream, `now` is
 * heard time and `shiftMs` its latency: `endsAt` is when that stream's listeners hear the end.
 */
export function presentNowPlaying(station: StationView, latest: TrackRow | null, now: Date, shiftMs = 0): NowPlaying {
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
  const threshold = station.nowPlayingFreshnessSeconds;
  const { ageSeconds, elapsedSeconds, status } = timing(moment.getTime(), latest.is_playing, latest.duration_seconds, threshold, now);
  const timed = latest.is_playing && latest.duration_seconds !== null;
  return {
    ...base,
    track: presentTrack(latest),
    elapsedSeconds,
    endsAt: timed ? new Date(moment.getTime() + Math.round((latest.duration_seconds as number) * 1000) + shiftMs).toISOString() : null,
    freshness: {
      status,
      thresholdSeconds: threshold,
      ageSeconds,
      observedAt: iso(latest.observed_at),
      receivedAt: latest.received_at.toISOString(),
    },
  };
}

/** What moves with time: the age of the observed moment, the elapsed part of the track, fresh or stale. */
function timing(momentMs: number, isPlaying: boolean, durationSeconds: number | null, threshold: number, now: Date) {
  // An observedAt slightly ahead of the server clock (allowed up to 300 s) counts as age 0.
  const ageSeconds = Math.max(0, Math.floor((now.getTime() - momentMs) / 1000));
  const elapsedSeconds = isPlaying && durationSeconds !== null ? Math.floor(Math.min(ageSeconds, durationSeconds)) : null;
  return { ageSeconds, elapsedSeconds, status: ageSeconds <= threshold ? ('fresh' as const) : ('stale' as const) };
}

/**
 * A presented now-playing (a stored feed row) re-derived at `now`: `elapsedSeconds` and the freshness
 * age and status move with time, everything else stays. The feed uses it for the state a connection
 * starts with, so a listener who connects late is told how old the track is, as REST would. The one
 * answer to "what was playing at instant t", for the live feed (`now`) and a stream's listeners alike:
 * for a stream, `now` is heard time and `shiftMs` its latency, so `endsAt` is when they hear the end
 * (as `presentNowPlaying` answers a read with `stream`).
 */
export function nowPlayingAt(data: NowPlaying, now: Date, shiftMs = 0): NowPlaying {
  const derived = derivedAt(data, now);
  if (shiftMs === 0) return derived;
  const ends = typeof derived.endsAt === 'string' ? Date.parse(derived.endsAt) : NaN;
  return { ...derived, endsAt: Number.isNaN(ends) ? (derived.endsAt ?? null) : new Date(ends + shiftMs).toISOString() };
}

function derivedAt(data: NowPlaying, now: Date): NowPlaying {
  const { track, freshness } = data;
  const moment = freshness.observedAt ?? freshness.receivedAt;
  if (!track || moment === null || freshness.thresholdSeconds === null) return data;
  const { ageSeconds, elapsedSeconds, status } = timing(
    Date.parse(moment),
    track.isPlaying,
    track.durationSeconds,
    freshness.thresholdSeconds,
    now,
  );
  return { ...data, elapsedSeconds, freshness: { ...freshness, status, ageSeconds } };
}
