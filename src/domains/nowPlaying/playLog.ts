import { Readable } from 'node:stream';
import { stringify } from 'csv-stringify';
import { DateTime } from 'luxon';
import { ValidationError } from '../../lib/errors.ts';
import type { Db } from '../../lib/db.ts';
import type { Station } from '../stations/model.ts';
import { playFiguresOf, type PlayFigures, type PlayFiguresContext } from './playFigures.ts';
import { endOfPlay, nextAtColumn, playBatches, type PlayKey } from './plays.ts';
import { featureValues, playColumns, type PlayValue } from './playColumns.ts';

// The play log (docs/now-playing.md#play-log-music-reporting): every stored observation with a track in [from, to), in play
// order, as CSV (RFC 4180) or JSON. The plays are read in keyset batches (plays.ts) and written to the
// response as they come; the response stream pulls the next batch only when the socket drained the last.

export const MAX_RANGE_DAYS = 31;

export const PLAY_COLUMNS = [
  'playedAt',
  'localTime',
  'artist',
  'title',
  'album',
  'durationSeconds',
  'sourceTrackId',
  'outcome',
  'broadcastId',
  'programTitle',
  'rundownItemId',
  'credentialLabel',
  'isrc',
  'endedAt',
  // The play's listeners (sum over streams, null when unknown) and per stream: playFigures.ts.
  'performances',
  'performancesByStream',
] as const;

/** A play as the log shows it: the core's columns, then the features' (playColumns.ts). */
export type Play = Record<Exclude<(typeof PLAY_COLUMNS)[number], 'performancesByStream'>, string | number | null> & {
  performancesByStream: PlayFigures['byStream'];
} & Record<string, PlayValue | PlayFigures['byStream']>;

/** Every column, in order: the core's, then the features' registered ones. */
export const playLogColumns = (): string[] => [...PLAY_COLUMNS, ...playColumns().flatMap((spec) => spec.columns)];

export interface PlayRange {
  from: Date;
  to: Date;
}

const invalid = (path: string, message: string) =>
  new ValidationError('Invalid play log range.', [{ path, code: 'invalid_value', message }]);

/** `from`/`to` as instants: ISO 8601 timestamps with a zone, `to` after `from`, at most `maxDays` (31) days apart. */
export function parseRange(query: { from?: string; to?: string }, maxDays = MAX_RANGE_DAYS): PlayRange {
  const parse = (name: 'from' | 'to'): Date => {
    const raw = query[name];
    if (raw === undefined) throw invalid(name, `${name} is required (an ISO 8601 timestamp, e.g. 2026-11-01T00:00:00Z)`);
    const parsed = DateTime.fromISO(raw, { setZone: true });
    if (!parsed.isValid || !/(Z|[+-]\d{2}:?\d{2})$/i.test(raw))
      throw invalid(name, `${name} must be an ISO 8601 timestamp with a time zone (Z or ±hh:mm)`);
    return parsed.toJSDate();
  };
  const from = parse('from');
  const to = parse('to');
  if (to <= from) throw invalid('to', 'to must be after from');
  if (to.getTime() - from.getTime() > maxDays * 24 * 3600_000) throw invalid('to', `the range may span at most ${maxDays} days`);
  return { from, to };
}

interface PlayRow extends PlayKey {
  id: string;
  artist: string | null;
  title: string | null;
  album: string | null;
  duration_seconds: number | null;
  source_track_id: string | null;
  outcome: string;
  broadcast_id: string | null;
  rundown_item_id: string | null;
  program_title: string | null;
  credential_label: string | null;
  isrc: string | null;
  /** The play time of the station's next observation (any, in play order), when there is one. */
  next_at: Date | null;
}

/** The plays of the range in order, one batch of rows at a time. */
function playLogBatches(db: Db, stationId: string, range: PlayRange): AsyncGenerator<PlayRow[]> {
  return playBatches<PlayRow>(db, stationId, range, (query) =>
    query
      .leftJoin('credentials as c', 'c.id', 'o.credential_id')
      .leftJoin('broadcasts as b', 'b.id', 'o.broadcast_id')
      .leftJoin('programs as p', 'p.id', 'b.program_id')
      .select(
        'o.id',
        'o.artist',
        'o.title',
        'o.album',
        'o.duration_seconds',
        'o.source_track_id',
        'o.outcome',
        'o.broadcast_id',
        'o.rundown_item_id',
        'p.title as program_title',
        'c.label as credential_label',
        'o.isrc',
        nextAtColumn(db),
      ),
  );
}

const endedAtOf = (row: PlayRow): Date | null =>
  endOfPlay(row.sort_at, row.duration_seconds, row.next_at === null ? null : new Date(row.next_at));

export function presentPlay(row: PlayRow, timezone: string, performances: PlayFigures, features: Record<string, PlayValue> = {}): Play {
  const endedAt = endedAtOf(row);
  return {
    playedAt: row.sort_at.toISOString(),
    localTime: DateTime.fromJSDate(row.sort_at, { zone: timezone }).toISO({ suppressMilliseconds: true }),
    artist: row.artist,
    title: row.title,
    album: row.album,
    durationSeconds: row.duration_seconds,
    sourceTrackId: row.source_track_id,
    outcome: row.outcome,
    broadcastId: row.broadcast_id,
    programTitle: row.program_title,
    rundownItemId: row.rundown_item_id,
    credentialLabel: row.credential_label,
    isrc: row.isrc,
    endedAt: endedAt ? endedAt.toISOString() : null,
    performances: performances.total,
    performancesByStream: performances.byStream,
    ...features,
  };
}

/**
 * The plays with their listener figures (playFigures.ts: the audience feature's, one call per batch)
 * and the features' columns (playColumns.ts, one read per feature and batch); a play without figures
 * lists every stream of the station as unknown.
 */
export async function* playsInRange(ctx: PlayLogContext, station: Station, range: PlayRange): AsyncGenerator<Play> {
  const keys = (station.profile.streamUrls ?? []).map((s) => s.key);
  for await (const batch of playLogBatches(ctx.db, station.id, range)) {
    const figures = await playFiguresOf(
      ctx,
      station,
      batch.map((row) => ({ id: row.id, start: row.sort_at, end: endedAtOf(row) })),
    );
    const features = await featureValues(
      ctx.db,
      station.id,
      batch.map((row) => row.id),
    );
    for (const row of batch) {
      const known = figures.get(row.id);
      const unknown = { total: null, byStream: Object.fromEntries(keys.map((k) => [k, null])) };
      yield presentPlay(row, station.timezone, known ?? unknown, features.get(row.id));
    }
  }
}

/** What the play log needs besides the station and range: the database, the config and the read's instant. */
export type PlayLogContext = PlayFiguresContext;

/** RFC 4180: a header row, CRLF line ends, fields quoted when they hold a comma, quote or line break (quotes doubled). */
export function playLogCsv(ctx: PlayLogContext, station: Station, range: PlayRange): Readable {
  const csv = stringify({ header: true, columns: playLogColumns(), record_delimiter: 'windows', quoted_match: /[\r\n]/ });
  // performancesByStream is the JSON text of its object; a null performances is an empty cell.
  async function* rows(): AsyncGenerator<Record<string, unknown>> {
    for await (const play of playsInRange(ctx, station, range))
      yield { ...play, performancesByStream: JSON.stringify(play.performancesByStream) };
  }
  return Readable.from(rows()).pipe(csv);
}

/** `{stationId, timezone, from, to, plays: [...]}`, written play by play. */
export function playLogJson(ctx: PlayLogContext, station: Station, range: PlayRange): Readable {
  async function* chunks(): AsyncGenerator<string> {
    yield `{"stationId":${JSON.stringify(station.id)},"timezone":${JSON.stringify(station.timezone)},"from":"${range.from.toISOString()}","to":"${range.to.toISOString()}","plays":[`;
    let first = true;
    for await (const play of playsInRange(ctx, station, range)) {
      yield (first ? '' : ',') + JSON.stringify(play);
      first = false;
    }
    yield ']}';
  }
  return Readable.from(chunks());
}

/** The download file name: `{slug}-plays-{from}-{to}.csv` with compact UTC instants. */
export function playLogFileName(slug: string, range: PlayRange): string {
  const compact = (d: Date) =>
    d
      .toISOString()
      .replace(/\.000Z$/, 'Z')
      .replace(/[-:]/g, '');
  return `${slug}-plays-${compact(range.from)}-${compact(range.to)}.csv`;
}
