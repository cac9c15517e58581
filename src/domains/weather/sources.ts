import type { Db } from '../../lib/db.ts';
import { ValidationError } from '../../lib/errors.ts';
import type { Jobs } from '../../jobs.ts';
import type { Feed } from './model.ts';
import type { FeedSourceView, OpenMeteoSourceBody, TomTomSourceBody } from './sourceSchemas.ts';

// Where a station's weather or traffic comes from when a worker polls it, and the BullMQ job scheduler
// that polls it. Polled data is stored through the same command as the admin PUT.

export type OpenMeteoSettings = Omit<Required<OpenMeteoSourceBody>, 'provider' | 'intervalSeconds'>;
export type TomTomSettings = Omit<Required<TomTomSourceBody>, 'provider' | 'intervalSeconds' | 'area'> & { area: string | null };

export type FeedSource =
  | { stationId: string; feed: 'weather'; provider: 'open-meteo'; settings: OpenMeteoSettings; intervalSeconds: number }
  | { stationId: string; feed: 'traffic'; provider: 'tomtom'; settings: TomTomSettings; intervalSeconds: number };

interface SourceRow {
  station_id: string;
  feed: Feed;
  provider: string;
  settings: Record<string, unknown>;
  interval_seconds: number;
  last_polled_at: Date | null;
  last_error: string | null;
}

export const DEFAULT_BASE_URLS = { 'open-meteo': 'https://api.open-meteo.com', tomtom: 'https://api.tomtom.com' } as const;

/** One scheduler per station and feed, so saving a source again replaces its schedule. */
export const schedulerId = (stationId: string, feed: Feed): string => `feeds.poll:${stationId}:${feed}`;

export function weatherSource(stationId: string, body: OpenMeteoSourceBody): FeedSource {
  const { provider: _provider, intervalSeconds, ...rest } = body;
  const settings: OpenMeteoSettings = { hourlyHours: 24, dailyDays: 7, baseUrl: DEFAULT_BASE_URLS['open-meteo'], ...rest };
  return { stationId, feed: 'weather', provider: 'open-meteo', settings, intervalSeconds: intervalSeconds ?? 900 };
}

export function trafficSource(stationId: string, body: TomTomSourceBody): FeedSource {
  const { minLat, minLon, maxLat, maxLon } = body.bbox;
  if (minLat >= maxLat || minLon >= maxLon) {
    throw new ValidationError('Invalid request body.', [
      { path: 'bbox', code: 'invalid_range', message: 'bbox needs minLat < maxLat and minLon < maxLon' },
    ]);
  }
  const { provider: _provider, intervalSeconds, area, ...rest } = body;
  const settings: TomTomSettings = { language: 'en-GB', baseUrl: DEFAULT_BASE_URLS.tomtom, ...rest, area: area ?? null };
  return { stationId, feed: 'traffic', provider: 'tomtom', settings, intervalSeconds: intervalSeconds ?? 300 };
}

/** Stores the source and (re)schedules its poll; the first poll runs at once. */
export async function saveSource(db: Db, jobs: Jobs, source: FeedSource, now: Date): Promise<FeedSourceView> {
  const row = {
    provider: source.provider,
    settings: JSON.stringify(source.settings),
    interval_seconds: source.intervalSeconds,
    last_error: null,
    updated_at: now,
  };
  await db.transaction((trx) =>
    trx('feed_sources')
      .insert({ station_id: source.stationId, feed: source.feed, created_at: now, ...row })
      .onConflict(['station_id', 'feed'])
      .merge(row),
  );
  await jobs.schedule(schedulerId(source.stationId, source.feed), source.intervalSeconds * 1000, 'feeds.poll', {
    stationId: source.stationId,
    feed: source.feed,
  });
  return (await findSourceView(db, source.stationId, source.feed))!;
}

export async function deleteSource(db: Db, jobs: Jobs, stationId: string, feed: Feed): Promise<void> {
  // The row first (an admin audit entry joins its transaction, http/audit.ts), then the poll.
  await db.transaction((trx) => trx('feed_sources').where({ station_id: stationId, feed }).delete());
  await jobs.unschedule(schedulerId(stationId, feed), 'feeds.poll');
}

export async function findSource(db: Db, stationId: string, feed: Feed): Promise<FeedSource | null> {
  const row = await db<SourceRow>('feed_sources').where({ station_id: stationId, feed }).first();
  if (!row) return null;
  return { stationId, feed, provider: row.provider, settings: row.settings, intervalSeconds: row.interval_seconds } as FeedSource;
}

/** The operator view: settings without the API key. */
export async function findSourceView(db: Db, stationId: string, feed: Feed): Promise<FeedSourceView | null> {
  const row = await db<SourceRow>('feed_sources').where({ station_id: stationId, feed }).first();
  if (!row) return null;
  const { apiKey: _apiKey, ...settings } = row.settings;
  return {
    feed,
    provider: row.provider,
    intervalSeconds: row.interval_seconds,
    settings,
    lastPolledAt: row.last_polled_at ? row.last_polled_at.toISOString() : null,
    lastError: row.last_error,
  };
}

export async function recordPoll(db: Db, stationId: string, feed: Feed, at: Date, error: string | null): Promise<void> {
  await db('feed_sources').where({ station_id: stationId, feed }).update({ last_polled_at: at, last_error: error });
}
