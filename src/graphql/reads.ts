import { LocalDate } from '../http/schema.ts';
import { validate } from '../http/validate.ts';
import { Type, type Static } from '../http/schema.ts';
import { currentBroadcastRead, programsRead, scheduleRead } from '../domains/schedule/reads.ts';
import { resolveWindow } from '../domains/schedule/window.ts';
import { delivers } from '../domains/stations/model.ts';
import { feedRead } from '../domains/weather/reads.ts';
import { Representation } from '../lib/readCache.ts';
import { nowPlayingRead, trackHistoryPage } from '../domains/nowPlaying/reads.ts';
import { StreamQuery, TrackHistoryQuery } from '../domains/nowPlaying/schemas.ts';
import { liveRead } from '../domains/nowPlaying/live.ts';
import { guard } from './errors.ts';
import { cached, requireModule, type Args, type GraphQLContext } from './context.ts';

// Schedule, programs, current broadcast, now playing, track history, weather and traffic over GraphQL: the REST queries and
// presenters, with the same window rules and errors.

const WindowQuery = Type.Object(
  { fromDate: Type.Optional(LocalDate), throughDate: Type.Optional(LocalDate) },
  { additionalProperties: false },
);
type WindowQuery = Static<typeof WindowQuery>;

/** The window arguments, checked as the REST query is (so errors come before any cached answer). */
function windowQuery(args: Args<WindowQuery>, ctx: GraphQLContext): WindowQuery {
  const query = validate<WindowQuery>(WindowQuery, 'query', {
    ...(args.fromDate != null ? { fromDate: args.fromDate } : {}),
    ...(args.throughDate != null ? { throughDate: args.throughDate } : {}),
  });
  resolveWindow(query, ctx.station.timezone, ctx.svc.clock.now());
  return query;
}

/** Without the contractVersion envelope field: GraphQL weather and traffic do not carry it (parsed once per answer). */
const versionless = new WeakMap<Representation, unknown>();

function withoutVersion(rep: Representation): unknown {
  let value = versionless.get(rep);
  if (value === undefined) {
    const { contractVersion: _ignored, ...rest } = JSON.parse(rep.bytes.toString('utf8')) as Record<string, unknown>;
    versionless.set(rep, (value = rest));
  }
  return value;
}

/** The `stream` argument as the REST query carries it (so both surfaces share one cached answer). */
function streamParams(args: Args<StreamQuery>): { stream?: string } {
  const query = validate<StreamQuery>(StreamQuery, 'query', args.stream != null ? { stream: args.stream } : {});
  return query.stream !== undefined ? { stream: query.stream } : {};
}

export const readResolvers = {
  schedule: (args: Args<WindowQuery>, ctx: GraphQLContext) =>
    guard(async () => {
      requireModule(ctx, 'schedule');
      const query = windowQuery(args, ctx);
      return (await cached(ctx, 'getSchedule', 'schedule', query, () => scheduleRead(ctx.svc, ctx.station, query))).value;
    }),

  programs: (args: Args<WindowQuery>, ctx: GraphQLContext) =>
    guard(async () => {
      requireModule(ctx, 'programs');
      const query = windowQuery(args, ctx);
      return (await cached(ctx, 'getPrograms', 'schedule', query, () => programsRead(ctx.svc, ctx.station, query))).value;
    }),

  currentBroadcast: (args: Args<StreamQuery>, ctx: GraphQLContext) =>
    guard(async () => {
      requireModule(ctx, 'currentBroadcast');
      const params = streamParams(args);
      return (await cached(ctx, 'getCurrentBroadcast', 'schedule', params, () => currentBroadcastRead(ctx.svc, ctx.station, params.stream)))
        .value;
    }),

  nowPlaying: (args: Args<StreamQuery>, ctx: GraphQLContext) =>
    guard(async () => {
      requireModule(ctx, 'nowPlaying');
      const params = streamParams(args);
      return (await cached(ctx, 'getNowPlaying', 'nowPlaying', params, () => nowPlayingRead(ctx.svc, ctx.station, params.stream))).value;
    }),

  live: (args: Args<StreamQuery>, ctx: GraphQLContext) =>
    guard(async () => {
      requireModule(ctx, 'nowPlaying');
      const params = streamParams(args);
      return (await cached(ctx, 'getLive', ['nowPlaying', 'schedule'], params, () => liveRead(ctx.svc, ctx.station, params.stream))).value;
    }),

  trackHistory: (args: Args<TrackHistoryQuery>, ctx: GraphQLContext) =>
    guard(async () => {
      requireModule(ctx, 'trackHistory');
      const query = validate<TrackHistoryQuery>(TrackHistoryQuery, 'query', {
        ...(args.cursor != null ? { cursor: args.cursor } : {}),
        ...(args.limit != null ? { limit: args.limit } : {}),
        ...(args.from != null ? { from: args.from } : {}),
        ...(args.to != null ? { to: args.to } : {}),
        ...(args.broadcastId != null ? { broadcastId: args.broadcastId } : {}),
        ...(args.stream != null ? { stream: args.stream } : {}),
      });
      const params: Record<string, string> = {
        ...(query.cursor !== undefined ? { cursor: query.cursor } : {}),
        ...(query.limit !== undefined ? { limit: String(query.limit) } : {}),
        ...(query.from !== undefined ? { from: query.from } : {}),
        ...(query.to !== undefined ? { to: query.to } : {}),
        ...(query.broadcastId !== undefined ? { broadcastId: query.broadcastId } : {}),
        ...(query.stream !== undefined ? { stream: query.stream } : {}),
      };
      return (await cached(ctx, 'getTrackHistory', 'nowPlaying', params, () => trackHistoryPage(ctx.svc, ctx.station, query))).value;
    }),

  weather: (_: unknown, ctx: GraphQLContext) =>
    guard(async () => {
      if (!delivers(ctx.station, 'weather')) return null;
      return withoutVersion(await cached(ctx, 'getWeather', 'weather', {}, () => feedRead(ctx.svc, ctx.station, 'weather')));
    }),

  traffic: (_: unknown, ctx: GraphQLContext) =>
    guard(async () => {
      if (!delivers(ctx.station, 'traffic')) return null;
      return withoutVersion(await cached(ctx, 'getTraffic', 'traffic', {}, () => feedRead(ctx.svc, ctx.station, 'traffic')));
    }),
};
