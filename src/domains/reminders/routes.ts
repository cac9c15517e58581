import { defineRoute } from '../../http/route.ts';
import { ErrorBody, StationSlugParams } from '../../http/schema.ts';
import { StationIdParams } from '../stations/schemas.ts';
import { followerCounts, replaceFollows } from './follows.ts';
import { FollowerCounts, FollowList, PutFollowsBody } from './schemas.ts';

// Follows (docs/push.md#following-for-station-app-developers, docs/push.md#the-operators-view): the
// listener's PUT (gates as the push device routes: station → credential push:register → rate limit → module
// push → body) and the operators' counts.

export const reminderRoutes = [
  defineRoute({
    tags: ['push'],
    surface: 'push' as const,
    station: 'slug' as const,
    scope: 'push:register' as const,
    rateLimit: 'push' as const,
    module: 'push' as const,
    params: StationSlugParams,
    method: 'put',
    path: '/api/v1/stations/{stationSlug}/push/follows',
    operationId: 'putPushFollows',
    summary: 'Replace the programs and presenters a registered device follows (reminders before their broadcasts)',
    description:
      'At most 100 follows, each `{programId}` or `{presenterId}` with `remindBeforeMinutes` (0, 5, 10, 15, 30 or 60; default 0). `follows: []` clears them. A device matched by several follows gets one reminder per broadcast, at the earliest due time. The device’s topics do not gate reminders.',
    body: PutFollowsBody,
    responses: {
      200: { description: 'The follows as stored.', schema: FollowList },
      400: {
        description: 'Invalid body; an unknown program or presenter, or one given twice, names its index (VALIDATION_ERROR).',
        schema: ErrorBody,
      },
      401: { description: 'Credential missing or invalid (scope push:register).', schema: ErrorBody },
      404: { description: 'Station unavailable, push module switched off, or the token is not registered.', schema: ErrorBody },
      429: { description: 'Rate limited.', schema: ErrorBody },
    },
    async handler({ svc, station, body }) {
      const follows = await replaceFollows(svc.db, {
        stationId: station.id,
        token: body.token,
        follows: body.follows,
        now: svc.clock.now(),
      });
      return { follows };
    },
  }),
  defineRoute({
    method: 'get',
    path: '/admin/v1/stations/{stationId}/push/follows',
    operationId: 'adminGetPushFollowers',
    access: { scope: 'push:send' },
    summary: 'How many devices follow each program and presenter',
    tags: ['admin'],
    surface: 'admin',
    params: StationIdParams,
    responses: {
      200: { description: 'Follower counts (devices are never shown).', schema: FollowerCounts },
      401: { description: 'Missing or invalid operator token.', schema: ErrorBody },
      404: { description: 'Station not found.', schema: ErrorBody },
    },
    async handler({ svc, params }) {
      const station = await svc.stations.require(params.stationId);
      return followerCounts(svc.db, station.id);
    },
  }),
];
