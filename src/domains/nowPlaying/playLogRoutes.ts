import { adminErrorResponses, adminWrite } from '../../http/responses.ts';
import { defineRoute } from '../../http/route.ts';
import { StringEnum, Timestamp, Type } from '../../http/schema.ts';
import { StationIdParams } from '../stations/schemas.ts';
import { PLAY_COLUMNS, parseRange, playLogCsv, playLogFileName, playLogJson } from './playLog.ts';
import { playColumns } from './playColumns.ts';

// GET /admin/v1/stations/{stationId}/plays (docs/now-playing.md#play-log-music-reporting).

const PlayLogQuery = Type.Object(
  {
    from: Type.Optional(Type.String({ description: 'ISO 8601 timestamp with zone; inclusive' })),
    to: Type.Optional(Type.String({ description: 'ISO 8601 timestamp with zone; exclusive; at most 31 days after from' })),
    format: Type.Optional(StringEnum(['json', 'csv'] as const)),
  },
  { additionalProperties: false },
);

const Nullable = <T extends ReturnType<typeof Type.String>>(s: T) => Type.Union([s, Type.Null()]);
const PlayItem = Type.Object({
  ...Object.fromEntries(
    PLAY_COLUMNS.map((c) => [
      c,
      c === 'durationSeconds' || c === 'performances'
        ? Type.Union([Type.Number(), Type.Null()])
        : c === 'performancesByStream'
          ? Type.Record(Type.String(), Type.Union([Type.Integer(), Type.Null()]), {
              description: 'listeners per stream key (every stream of the station); null when unknown, never 0 for unknown',
            })
          : c === 'playedAt' || c === 'localTime' || c === 'title' || c === 'outcome'
            ? Type.String()
            : Nullable(Type.String()),
    ]),
  ),
  // The features' columns (playColumns.ts), after the core's.
  ...Object.fromEntries(playColumns().flatMap((spec) => spec.columns.map((c) => [c, spec.schema[c]]))),
});
const PlayLog = Type.Object({
  stationId: Type.String(),
  timezone: Type.String(),
  from: Timestamp,
  to: Timestamp,
  plays: Type.Array(PlayItem),
});

export const playLogRoutes = [
  defineRoute({
    ...adminWrite,
    method: 'get',
    path: '/admin/v1/stations/{stationId}/plays',
    operationId: 'adminPlayLog',
    access: { scope: 'plays:read' },
    summary: 'The play log for music reporting: every observation with a track in [from, to)',
    description:
      'Ordered by play time (observedAt, else receivedAt). `format=json` (default) answers the schema below; `format=csv` answers `text/csv; charset=utf-8` ' +
      '(RFC 4180, header row, CRLF) as a download (`Content-Disposition: attachment; filename="{slug}-plays-{from}-{to}.csv"`) with the same columns. ' +
      'Both are streamed. A missing or bad `from`/`to`, `to <= from` or a range over 31 days is 400.',
    params: StationIdParams,
    query: PlayLogQuery,
    responses: {
      200: {
        description: 'The plays (JSON; CSV with format=csv).',
        schema: PlayLog,
        alsoAs: { 'text/csv': 'format=csv: RFC 4180 with a header row of the same columns, as a download' },
      },
      ...adminErrorResponses(),
    },
    async handler({ ctx, svc, params, query }) {
      const station = await svc.stations.require(params.stationId);
      const range = parseRange(query);
      const logContext = { db: svc.db, config: svc.config, now: svc.clock.now() };
      if (query.format === 'csv') {
        ctx.type = 'text/csv; charset=utf-8';
        ctx.set('Content-Disposition', `attachment; filename="${playLogFileName(station.slug, range)}"`);
        ctx.body = playLogCsv(logContext, station, range);
      } else {
        ctx.type = 'application/json; charset=utf-8';
        ctx.body = playLogJson(logContext, station, range);
      }
      ctx.set('Cache-Control', 'no-store');
      return undefined;
    },
  }),
];
