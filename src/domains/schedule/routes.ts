import { listenerErrorResponses, listenerRead } from '../../http/responses.ts';
import { defineRoute } from '../../http/route.ts';
import { sendCacheable } from '../../http/etag.ts';
import { MAX_BROADCASTS } from './model.ts';
import { broadcastOnAir, broadcastsOverlapping, programsWithBroadcasts } from './queries.ts';
import { presentCurrentBroadcast, presentPrograms, presentSchedule } from './presenter.ts';
import { CurrentBroadcastResponse, ProgramsResponse, ScheduleResponse, StationSlugParams, WindowQuery } from './schemas.ts';
import { buildCalendar, ICS_CONTENT_TYPE } from './ics.ts';
import { resolveWindow } from './window.ts';
import { scheduleAdminRoutes } from './admin-routes.ts';

const listenerErrors = listenerErrorResponses('Station unknown, inactive or offline, or the module is switched off.');

const listener = { ...listenerRead, params: StationSlugParams };

export const scheduleListenerRoutes = [
  defineRoute({
    ...listener,
    method: 'get',
    path: '/api/v1/stations/{stationSlug}/schedule',
    operationId: 'getSchedule',
    summary: 'Published broadcasts overlapping a window of local dates',
    description:
      'Window [fromDate 00:00, throughDate+1 00:00) in the station time zone; fromDate defaults to today, throughDate to fromDate + 6 days; at most 31 inclusive days. At most 1000 broadcasts by startsAt; `truncated` tells when more exist.',
    module: 'schedule',
    query: WindowQuery,
    responses: { 200: { description: 'The schedule.', schema: ScheduleResponse }, ...listenerErrors },
    async handler({ svc, station, query }) {
      const now = svc.clock.now();
      const window = resolveWindow(query, station.timezone, now);
      const { broadcasts, truncated } = await broadcastsOverlapping(svc.db, station.id, window.start, window.end, MAX_BROADCASTS);
      return presentSchedule(broadcasts, truncated, station.timezone, now);
    },
  }),
  defineRoute({
    ...listener,
    method: 'get',
    path: '/api/v1/stations/{stationSlug}/programs',
    operationId: 'getPrograms',
    summary: 'Programs with a broadcast in a window, with presenters and weekly slots',
    description: 'Same window rules as the schedule. A program is listed when one of its published, non-cancelled broadcasts overlaps the window.',
    module: 'programs',
    query: WindowQuery,
    responses: { 200: { description: 'The programs.', schema: ProgramsResponse }, ...listenerErrors },
    async handler({ svc, station, query }) {
      const window = resolveWindow(query, station.timezone, svc.clock.now());
      return presentPrograms(await programsWithBroadcasts(svc.db, station.id, window.start, window.end), window, station.timezone);
    },
  }),
  defineRoute({
    ...listener,
    method: 'get',
    path: '/api/v1/stations/{stationSlug}/broadcast/current',
    operationId: 'getCurrentBroadcast',
    summary: 'The broadcast on air now, or null',
    module: 'currentBroadcast',
    responses: { 200: { description: 'The current broadcast (null when nothing is on air).', schema: CurrentBroadcastResponse }, ...listenerErrors },
    async handler({ svc, station }) {
      const now = svc.clock.now();
      return presentCurrentBroadcast(await broadcastOnAir(svc.db, station.id, now), station.timezone, now);
    },
  }),
  defineRoute({
    ...listener,
    method: 'get',
    path: '/api/v1/stations/{stationSlug}/schedule.ics',
    operationId: 'getScheduleCalendar',
    summary: 'The schedule as an iCalendar feed',
    description: 'Same query parameters, window rules and credential as the schedule. One VEVENT per broadcast, UID `{broadcastId}@waveline`, times in UTC.',
    module: 'calendar',
    query: WindowQuery,
    responses: { 200: { description: 'iCalendar text (RFC 5545).', contentType: 'text/calendar' }, ...listenerErrors },
    async handler({ ctx, svc, station, query }) {
      const window = resolveWindow(query, station.timezone, svc.clock.now());
      const { broadcasts } = await broadcastsOverlapping(svc.db, station.id, window.start, window.end, MAX_BROADCASTS);
      sendCacheable(ctx, Buffer.from(buildCalendar(station, broadcasts)), ICS_CONTENT_TYPE);
      return undefined;
    },
  }),
];

export const scheduleRoutes = [...scheduleListenerRoutes, ...scheduleAdminRoutes];
