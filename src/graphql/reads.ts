import { LocalDate } from '../http/schema.ts';
import { validate } from '../http/validate.ts';
import { Type } from '../http/schema.ts';
import { MAX_BROADCASTS } from '../domains/schedule/model.ts';
import { broadcastOnAir, broadcastsOverlapping, programsWithBroadcasts } from '../domains/schedule/queries.ts';
import { presentCurrentBroadcast, presentPrograms, presentSchedule } from '../domains/schedule/presenter.ts';
import { resolveWindow } from '../domains/schedule/window.ts';
import { delivers } from '../domains/stations/model.ts';
import { findStoredSnapshot } from '../domains/weather/queries.ts';
import { trafficJson, weatherJson } from '../domains/weather/presenter.ts';
import { ModuleDisabledError } from '../lib/errors.ts';
import { nowPlayingOf, trackHistoryPage } from '../domains/nowPlaying/reads.ts';
import { TrackHistoryQuery } from '../domains/nowPlaying/schemas.ts';
import { guard } from './errors.ts';
import type { GraphQLContext } from './resolvers.ts';

// Schedule, programs, current broadcast, now playing, track history, weather and traffic over GraphQL: the REST queries and
// presenters, with the same window rules and errors.

const WindowArgs = Type.Object({ fromDate: Type.Optional(LocalDate), throughDate: Type.Optional(LocalDate) }, { additionalProperties: false });

interface WindowArgs {
  fromDate?: string | null;
  throughDate?: string | null;
}

function windowOf(args: WindowArgs, ctx: GraphQLContext) {
  const query = {
    ...(args.fromDate != null ? { fromDate: args.fromDate } : {}),
    ...(args.throughDate != null ? { throughDate: args.throughDate } : {}),
  };
  return resolveWindow(validate(WindowArgs, 'query', query), ctx.station.timezone, ctx.svc.clock.now());
}

function requireModule(ctx: GraphQLContext, module: 'schedule' | 'programs' | 'currentBroadcast' | 'nowPlaying' | 'trackHistory'): void {
  if (!ctx.station.modules[module]) throw new ModuleDisabledError(module);
}

/** Without the contractVersion envelope field: GraphQL weather and traffic do not carry it. */
function withoutVersion(json: string): unknown {
  const { contractVersion: _ignored, ...rest } = JSON.parse(json) as Record<string, unknown>;
  return rest;
}

export const readResolvers = {
  schedule: (args: WindowArgs, ctx: GraphQLContext) =>
    guard(async () => {
      requireModule(ctx, 'schedule');
      const window = windowOf(args, ctx);
      const { broadcasts, truncated } = await broadcastsOverlapping(ctx.svc.db, ctx.station.id, window.start, window.end, MAX_BROADCASTS);
      return presentSchedule(broadcasts, truncated, ctx.station.timezone, ctx.svc.clock.now());
    }),

  programs: (args: WindowArgs, ctx: GraphQLContext) =>
    guard(async () => {
      requireModule(ctx, 'programs');
      const window = windowOf(args, ctx);
      return presentPrograms(await programsWithBroadcasts(ctx.svc.db, ctx.station.id, window.start, window.end), window, ctx.station.timezone);
    }),

  currentBroadcast: (_: unknown, ctx: GraphQLContext) =>
    guard(async () => {
      requireModule(ctx, 'currentBroadcast');
      const now = ctx.svc.clock.now();
      return presentCurrentBroadcast(await broadcastOnAir(ctx.svc.db, ctx.station.id, now), ctx.station.timezone, now);
    }),

  nowPlaying: (_: unknown, ctx: GraphQLContext) =>
    guard(async () => {
      requireModule(ctx, 'nowPlaying');
      return nowPlayingOf(ctx.svc, ctx.station);
    }),

  trackHistory: (args: { cursor?: string | null; limit?: number | null; from?: string | null; to?: string | null; broadcastId?: string | null }, ctx: GraphQLContext) =>
    guard(async () => {
      requireModule(ctx, 'trackHistory');
      const query = validate<TrackHistoryQuery>(TrackHistoryQuery, 'query', {
        ...(args.cursor != null ? { cursor: args.cursor } : {}),
        ...(args.limit != null ? { limit: args.limit } : {}),
        ...(args.from != null ? { from: args.from } : {}),
        ...(args.to != null ? { to: args.to } : {}),
        ...(args.broadcastId != null ? { broadcastId: args.broadcastId } : {}),
      });
      return trackHistoryPage(ctx.svc, ctx.station, query);
    }),

  weather: (_: unknown, ctx: GraphQLContext) =>
    guard(async () => {
      if (!delivers(ctx.station, 'weather')) return null;
      return withoutVersion(weatherJson(ctx.station.timezone, await findStoredSnapshot(ctx.svc.db, 'weather', ctx.station.id), ctx.svc.clock.now()));
    }),

  traffic: (_: unknown, ctx: GraphQLContext) =>
    guard(async () => {
      if (!delivers(ctx.station, 'traffic')) return null;
      return withoutVersion(trafficJson(ctx.station.timezone, await findStoredSnapshot(ctx.svc.db, 'traffic', ctx.station.id), ctx.svc.clock.now()));
    }),
};
