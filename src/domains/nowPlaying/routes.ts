import { defineRoute } from '../../http/route.ts';
import { listenerRead } from '../../http/responses.ts';
import { ErrorBody, LegacyErrorBody } from '../../http/schema.ts';
import { bindObservation } from './bind.ts';
import { ingestObservation } from './commands.ts';
import { INGEST_BODY_LIMIT } from './model.ts';
import { nowPlayingRead, nowPlayingSeeded, trackHistoryPage } from './reads.ts';
import { liveRead } from './live.ts';
import {
  IngestBody,
  IngestQuery,
  IngestResponse,
  Live,
  NowPlaying,
  StationSlugParams,
  StreamQuery,
  TrackHistory,
  TrackHistoryQuery,
} from './schemas.ts';

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
    description:
      'With `stream={key}`: the track that stream’s listeners hear now — everything at heard time (now − the stream’s latencySeconds), `endsAt` shifted by the latency, and `stream` in the body (docs/now-playing.md, "Heard time").',
    ...listenerRead,
    module: 'nowPlaying',
    cache: 'nowPlaying',
    // Every app polls it again after a song change: the new answer is computed when the change is heard.
    refreshAhead: true,
    // The ingest sends the new answer with its invalidation: no web process reads it at a song change.
    seeded: ({ svc, station, query, seed }) => (query.stream === undefined ? nowPlayingSeeded(svc, station, seed) : undefined),
    params: StationSlugParams,
    query: StreamQuery,
    responses: { 200: { description: 'Now playing.', schema: NowPlaying }, ...listenerErrors },
    handler({ svc, station, query }) {
      return nowPlayingRead(svc, station, query.stream);
    },
  }),
  defineRoute({
    method: 'get',
    path: '/api/v1/stations/{stationSlug}/live',
    operationId: 'getLive',
    summary: 'What a player shows: the broadcast, now playing and up next, at one instant',
    description:
      'Every part is computed at the same instant — heard time (now − latencySeconds) with `stream={key}` — so the parts never disagree. ' +
      '`broadcast` as in the schedule (null when nothing is on air); `nowPlaying` as the now-playing response; `upNext` null unless the station switched it on ' +
      '(docs/now-playing.md, "Up next").',
    ...listenerRead,
    module: 'nowPlaying',
    cache: ['nowPlaying', 'schedule'],
    refreshAhead: true,
    params: StationSlugParams,
    query: StreamQuery,
    responses: { 200: { description: 'The live answer.', schema: Live }, ...listenerErrors },
    handler({ svc, station, query }) {
      return liveRead(svc, station, query.stream);
    },
  }),
  defineRoute({
    method: 'get',
    path: '/api/v1/stations/{stationSlug}/track-history',
    operationId: 'getTrackHistory',
    summary: 'Reported tracks that were playing, newest first',
    description: 'With `stream={key}`: only the items that stream’s listeners have heard (played at or before now − latencySeconds).',
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
