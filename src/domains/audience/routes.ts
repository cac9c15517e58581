import { adminErrorResponses, adminWrite } from '../../http/responses.ts';
import { defineRoute } from '../../http/route.ts';
import { LegacyErrorBody } from '../../http/schema.ts';
import { NotFoundError } from '../../lib/errors.ts';
import { StationIdParams } from '../stations/schemas.ts';
import { IngestQuery } from '../nowPlaying/schemas.ts';
import { parseRange } from '../nowPlaying/playLog.ts';
import { streamOf } from '../stations/streams.ts';
import { listenerHours } from './listenerHours.ts';
import { acceptSamples } from './push.ts';
import { prepareReport, reportFileName, reportMonth, reportText, requireRoyalties } from './report.ts';
import { pollStates, pollStateKey } from './samples.ts';
import { Audience, AudienceQuery, PushSamplesBody, PushSamplesResponse, ReportQuery } from './schemas.ts';
import { royaltiesOf } from './settings.ts';

// Audience routes (docs/audience.md).

const legacy = (description: string) => ({ description, schema: LegacyErrorBody });
const PUSH_BODY_LIMIT = 16 * 1024;

export const audienceRoutes = [
  defineRoute({
    method: 'post',
    path: '/api/v1/integrations/listeners',
    operationId: 'ingestListeners',
    summary: 'Report listener counts per stream (HLS packagers, CDNs that count sessions themselves)',
    description:
      'Body `{samples: [{stream, listeners, at}]}`, 1–100 samples; `stream` is a key of the station’s `profile.streamUrls[]`, `at` lies within the last 24 h and not in the future. ' +
      'The same (stream, at) again replaces the sample. A refused batch stores nothing; the error names the sample’s index (from 0). Errors use the ingest route’s `{error: string}` body.',
    tags: ['ingest'],
    surface: 'ingest',
    station: 'query',
    scope: 'ingest:write',
    rateLimit: 'ingest',
    errorShape: 'legacy',
    methodNotAllowed: true,
    query: IngestQuery,
    body: PushSamplesBody,
    bodyParser: 'json-object',
    bodyLimit: PUSH_BODY_LIMIT,
    responses: {
      200: { description: 'Every sample stored.', schema: PushSamplesResponse },
      400: legacy('Invalid query or body; the message names the sample’s index and field.'),
      401: legacy('Missing or invalid credential, or not the credential’s station.'),
      403: legacy('The station is inactive.'),
      413: legacy('Body larger than 16 KiB.'),
      415: legacy('Content-Type is not application/json.'),
      429: legacy('Rate limited.'),
      503: legacy('Postgres is unreachable: nothing was stored; retry after `Retry-After` seconds.'),
    },
    handler({ svc, station, body }) {
      return acceptSamples(svc, station, station.profile.streamUrls, body);
    },
  }),
  defineRoute({
    ...adminWrite,
    method: 'get',
    path: '/admin/v1/stations/{stationId}/audience',
    operationId: 'adminAudience',
    access: { scope: 'plays:read' },
    summary: 'Listener-hours and peaks per hour or day (or of one broadcast), per stream, and each stream’s poll state',
    description:
      '`from`/`to` (ISO 8601 with zone, at most 31 days) or `broadcastId`; `interval` hour (default) or day, in the station’s time zone; `stream` limits to one key. ' +
      'Listener-hours integrate samples by the trapezoid rule; a gap over 3 poll intervals is unknown. A bucket without data is null, never 0 (docs/audience.md).',
    params: StationIdParams,
    query: AudienceQuery,
    responses: { 200: { description: 'The audience.', schema: Audience }, ...adminErrorResponses() },
    async handler({ svc, params, query }) {
      const station = await svc.stations.require(params.stationId);
      const streams = station.profile.streamUrls ?? [];
      const only = streamOf(station, query.stream);
      let range: { from: Date; to: Date };
      if (query.broadcastId !== undefined) {
        const broadcast = await svc
          .db('broadcasts')
          .where({ id: query.broadcastId, station_id: station.id })
          .first<{ starts_at: Date; ends_at: Date } | undefined>('starts_at', 'ends_at');
        if (!broadcast) throw new NotFoundError('No such broadcast at this station.');
        range = { from: broadcast.starts_at, to: broadcast.ends_at };
      } else range = parseRange(query);
      const interval = query.interval ?? 'hour';
      const keys = only ? [only.key] : streams.map((s) => s.key);
      const { series, total } = await listenerHours(svc.db, {
        stationId: station.id,
        timezone: station.timezone,
        streamKeys: keys,
        from: range.from,
        to: range.to,
        interval,
        pollSeconds: svc.config.audience.pollSeconds,
      });
      const states = await pollStates(svc.db, [station.id]);
      const streamStates = Object.fromEntries(
        keys.map((k) => {
          const state = states.get(pollStateKey(station.id, k));
          return [k, { lastSampleAt: state?.lastSampleAt?.toISOString() ?? null, lastError: state?.lastError ?? null }];
        }),
      );
      return {
        stationId: station.id,
        timezone: station.timezone,
        from: range.from.toISOString(),
        to: range.to.toISOString(),
        interval,
        broadcastId: query.broadcastId ?? null,
        series,
        total,
        streams: streamStates,
      };
    },
  }),
  defineRoute({
    ...adminWrite,
    method: 'get',
    path: '/admin/v1/stations/{stationId}/plays/report.txt',
    operationId: 'adminPlaysReport',
    access: { scope: 'plays:read' },
    summary: 'The SoundExchange census Report of Use for a month (tab-separated ASCII)',
    description:
      'One row per music play of `month` in the station’s time zone, under the header row NAME_OF_SERVICE … ACTUAL_TOTAL_PERFORMANCES; ' +
      'a play with unknown performances has an empty figure and is counted in `X-Waveline-Unknown-Performances`. ' +
      'Download name `{serviceName}{YYYYMMDD}_{YYYYMMDD}_{category}.txt`. Without `royalties.serviceName` or `royalties.transmissionCategory`: 409 ROYALTIES_NOT_CONFIGURED.',
    params: StationIdParams,
    query: ReportQuery,
    responses: {
      200: { description: 'The report (text/plain; streamed).', contentType: 'text/plain' },
      ...adminErrorResponses(),
    },
    async handler({ ctx, svc, params, query }) {
      const station = await svc.stations.require(params.stationId);
      const royalties = requireRoyalties(royaltiesOf(station));
      const month = reportMonth(query.month, station.timezone);
      const unknown = await prepareReport(svc, station.id, month);
      ctx.type = 'text/plain; charset=us-ascii';
      ctx.set('Content-Disposition', `attachment; filename="${reportFileName(royalties, month)}"`);
      ctx.set('X-Waveline-Unknown-Performances', String(unknown));
      ctx.set('Cache-Control', 'no-store');
      ctx.body = reportText(svc.db, station.id, royalties, month);
      return undefined;
    },
  }),
];
