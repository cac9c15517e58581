import { defineRoute } from '../../http/route.ts';
import { listenerRead } from '../../http/responses.ts';
import { ErrorBody, LegacyErrorBody } from '../../http/schema.ts';
import { bindObservation } from './bind.ts';
import { ingestObservation } from './commands.ts';
import { INGEST_BODY_LIMIT } from './model.ts';
import { nowPlayingRead, trackHistoryPage } from './reads.ts';
import { IngestBody, IngestQuery, IngestResponse, NowPlaying, StationSlugParams, TrackHistory, TrackHistoryQuery } from './schemas.ts';

const listenerErrors = {
  304: { description: 'Not modified (If-None-Match matched the current ETag).' },
  400: { description: 'Invalid parameters.', schema: ErrorBody },
  401: { description: 'Missing or invalid credential.', schema: ErrorBody },
  404: { description: 'Station unknown, inactive or offline, or the resource switched off.', schema: ErrorBody },
  429: { description: 'Rate limited.', schema: ErrorBody },
};

const legacy = (description: string) => ({ description, schema: LegacyErrorBody });

export const nowPlayingRoutes = [
  defineRoute({
    method: 'post',
    path: '/api/v1/integrations/playback',
    operationId: 'ingestPlayback',
    summary: 'Report a now-playing observation (encoders and automation systems)',
    description:
      'Stores the observation, then follows it against the live rundown. Query: exactly one of stationSlug or stationId, naming the credential’s station. ' +
      'Content-Type application/json, body at most 8 KiB. Errors use the legacy `{error: string}` body. Outcome rules: docs/now-playing.md.',
    tags: ['ingest'],
    surface: 'ingest',
    // The query names the credential's own station: unknown → 401, inactive → 403 after the credential.
    station: 'query',
    scope: 'ingest:write',
    rateLimit: 'ingest',
    errorShape: 'legacy',
    methodNotAllowed: true,
    query: IngestQuery,
    body: IngestBody,
    bodyParser: 'json-object',
    bodyLimit: INGEST_BODY_LIMIT,
    responses: {
      200: { description: 'Stored (or deduplicated) and followed; inspect both fields.', schema: IngestResponse },
      400: legacy('Invalid query or body; the message names the field.'),
      401: legacy('Missing or invalid credential, or not the credential’s station.'),
      403: legacy('The station is inactive.'),
      413: legacy('Body larger than 8 KiB.'),
      415: legacy('Content-Type is not application/json.'),
      429: legacy('Rate limited.'),
      503: legacy('Postgres is unreachable: nothing was stored; retry after `Retry-After` seconds.'),
    },
    handler({ svc, station, credential, body }) {
      return ingestObservation(svc, station, bindObservation(body), credential.id);
    },
  }),
  defineRoute({
    method: 'get',
    path: '/api/v1/stations/{stationSlug}/now-playing',
    operationId: 'getNowPlaying',
    summary: 'The latest reported track with timing and freshness',
    ...listenerRead,
    module: 'nowPlaying',
    cache: 'nowPlaying',
    params: StationSlugParams,
    responses: { 200: { description: 'Now playing.', schema: NowPlaying }, ...listenerErrors },
    handler({ svc, station }) {
      return nowPlayingRead(svc, station);
    },
  }),
  defineRoute({
    method: 'get',
    path: '/api/v1/stations/{stationSlug}/track-history',
    operationId: 'getTrackHistory',
    summary: 'Reported tracks that were playing, newest first',
    ...listenerRead,
    module: 'trackHistory',
    cache: 'nowPlaying',
    params: StationSlugParams,
    query: TrackHistoryQuery,
    responses: { 200: { description: 'A page of track history.', schema: TrackHistory }, ...listenerErrors },
    async handler({ svc, station, query }) {
      return trackHistoryPage(svc, station, query);
    },
  }),
];
