import { Readable } from 'node:stream';
import { stringify } from 'csv-stringify';
import { DateTime } from 'luxon';
import { ValidationError } from '../../lib/errors.ts';
import type { Db } from '../../lib/db.ts';
import type { Station } from '../stations/model.ts';
import { computePerformances, totalOf, type ByStream } from '../audience/performances.ts';

// The play log (decisions.md, "Play log"): every stored observation with a track in [from, to), in play
// order, as CSV (RFC 4180) or JSON. Rows are read in keyset batches on the (station, sort_at, receipt_seq)
// index and written to the response as they come, so a month of plays never sits in memory whole, and
// no pooled connection is held while a slow client downloads (a server-side cursor would pin one for
// the whole transfer). The response stream pulls the next batch only when the socket drained the last.

export const MAX_RANGE_DAYS = 31;
const BATCH = 2000;

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
  // decisions.md, "Audience": the play's listeners (sum over streams, null when unknown) and per stream.
  'performances',
  'performancesByStream',
] as const;

export type Play = Record<Exclude<(typeof PLAY_COLUMNS)[number], 'performancesByStream'>, string | number | null> & {
  performancesByStream: ByStream;
};

export interface PlayRange {
  from: Date;
  to: Date;
}

const invalid = (path: string, message: string) =>
  new ValidationError('Invalid play log range.', [{ path, code: 'invalid_value', message }]);

/** `from`/`to` as instants: ISO 8601 timestamps with a zone, `to` after `from`, at most 31 days apart. */
export function parseRange(query: { from?: string; to?: string }): PlayRange {
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
  if (to.getTime() - from.getTime() > MAX_RANGE_DAYS * 24 * 3600_000)
    throw invalid('to', `the range may span at most ${MAX_RANGE_DAYS} days`);
  return { from, to };
}

interface PlayRow {
  id: string;
  sort_at: Date;
  receipt_seq: number;
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
  /** The figures fixed for the play (src/domains/audience/performances.ts); null until then. */
  by_stream: ByStream | null;
  performances: number | null;
}

/** The plays of the range in order, one batch of rows at a time. */
export async function* playBatches(db: Db, stationId: string, range: PlayRange): AsyncGenerator<PlayRow[]> {
  let after: { sortAt: Date; seq: number } | null = null;
  for (;;) {
    const query = db('observations as o')
      .leftJoin('credentials as c', 'c.id', 'o.credential_id')
      .leftJoin('broadcasts as b', 'b.id', 'o.broadcast_id')
      .leftJoin('programs as p', 'p.id', 'b.program_id')
      .leftJoin('play_performances as pp', 'pp.observation_id', 'o.id')
      .where('o.station_id', stationId)
      .andWhere('o.sort_at', '>=', range.from)
      .andWhere('o.sort_at', '<', range.to)
      .whereNotNull('o.title')
      .orderBy([{ column: 'o.sort_at' }, { column: 'o.receipt_seq' }])
      .limit(BATCH)
      .select<PlayRow[]>(
        'o.id',
        'o.sort_at',
        'o.receipt_seq',
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
        'pp.by_stream',
        'pp.performances',
        // The next observation in play order (of any kind: one without a track ends the play too), on the
        // (station, sort_at, receipt_seq) index; it may lie beyond the range or the batch.
        db.raw(
          `(SELECT n.sort_at FROM observations n WHERE n.station_id = o.station_id
              AND (n.sort_at, n.receipt_seq) > (o.sort_at, o.receipt_seq)
            ORDER BY n.sort_at, n.receipt_seq LIMIT 1) AS next_at`,
        ),
      );
    if (after) query.andWhereRaw('(o.sort_at, o.receipt_seq) > (?::timestamptz, ?::bigint)', [after.sortAt, after.seq]);
    const rows = await query;
    if (rows.length) yield rows;
    if (rows.length < BATCH) return;
    const last = rows[rows.length - 1];
    after = { sortAt: last.sort_at, seq: Number(last.receipt_seq) };
  }
}

/** The next observation's play time or playedAt + durationSeconds, whichever is earlier; null when neither is known. */
export function endOfPlay(playedAt: Date, durationSeconds: number | null, nextAt: Date | null): Date | null {
  const byDuration = durationSeconds !== null ? new Date(playedAt.getTime() + Math.round(durationSeconds * 1000)) : null;
  if (byDuration && nextAt) return byDuration.getTime() <= nextAt.getTime() ? byDuration : nextAt;
  return byDuration ?? nextAt;
}

const endedAtOf = (row: PlayRow): Date | null =>
  endOfPlay(row.sort_at, row.duration_seconds, row.next_at === null ? null : new Date(row.next_at));

/**
 * Every stream key of the station (null when unknown), then any key a fixed figure holds for a stream
 * since removed: its listeners were real and are part of the play's sum.
 */
function performancesOf(row: PlayRow, streamKeys: string[], live: ByStream | undefined): { total: number | null; byStream: ByStream } {
  const byStream: ByStream = Object.fromEntries(streamKeys.map((k) => [k, null]));
  if (row.by_stream) return { total: row.performances, byStream: { ...byStream, ...row.by_stream } };
  Object.assign(byStream, live);
  return { total: totalOf(byStream), byStream };
}

export function presentPlay(row: PlayRow, timezone: string, performances: { total: number | null; byStream: ByStream }): Play {
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
  };
}

/**
 * The plays with their performances: fixed figures as stored; a play not fixed yet (on air, or ended
 * less than a poll interval ago) is computed from the samples now, one statement per batch.
 */
async function* plays(db: Db, station: Station, range: PlayRange, pollSeconds: number, now: Date): AsyncGenerator<Play> {
  const streams = station.profile.streamUrls ?? [];
  const keys = streams.map((s) => s.key);
  for await (const batch of playBatches(db, station.id, range)) {
    const open = batch.filter((row) => row.by_stream === null).map((row) => ({ id: row.id, start: row.sort_at, end: endedAtOf(row) }));
    const live = await computePerformances(db, station.id, streams, open, pollSeconds, now);
    for (const row of batch) yield presentPlay(row, station.timezone, performancesOf(row, keys, live.get(row.id)));
  }
}

/** What the play log needs besides the station and range: the poll interval (performance windows) and now. */
export interface PlayLogContext {
  db: Db;
  pollSeconds: number;
  now: Date;
}

/** RFC 4180: a header row, CRLF line ends, fields quoted when they hold a comma, quote or line break (quotes doubled). */
export function playLogCsv(ctx: PlayLogContext, station: Station, range: PlayRange): Readable {
  const csv = stringify({ header: true, columns: [...PLAY_COLUMNS], record_delimiter: 'windows', quoted_match: /[\r\n]/ });
  // performancesByStream is the JSON text of its object; a null performances is an empty cell.
  async function* rows(): AsyncGenerator<Record<string, unknown>> {
    for await (const play of plays(ctx.db, station, range, ctx.pollSeconds, ctx.now))
      yield { ...play, performancesByStream: JSON.stringify(play.performancesByStream) };
  }
  return Readable.from(rows()).pipe(csv);
}

/** `{stationId, timezone, from, to, plays: [...]}`, written play by play. */
export function playLogJson(ctx: PlayLogContext, station: Station, range: PlayRange): Readable {
  async function* chunks(): AsyncGenerator<string> {
    yield `{"stationId":${JSON.stringify(station.id)},"timezone":${JSON.stringify(station.timezone)},"from":"${range.from.toISOString()}","to":"${range.to.toISOString()}","plays":[`;
    let first = true;
    for await (const play of plays(ctx.db, station, range, ctx.pollSeconds, ctx.now)) {
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
