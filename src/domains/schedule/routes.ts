import { listenerErrorResponses, listenerRead } from '../../http/responses.ts';
import { defineRoute } from '../../http/route.ts';
import { CurrentBroadcastResponse, ProgramsResponse, ScheduleResponse, StationSlugParams, WindowQuery } from './schemas.ts';
import { StreamQuery } from '../stations/streams.ts';
import { calendarRead, currentBroadcastRead, programsRead, scheduleRead } from './reads.ts';
import { scheduleAdminRoutes } from './adminRoutes.ts';

const listenerErrors = listenerErrorResponses('Station unknown, inactive or offline, or the module is switched off.');

const listener = { ...listenerRead, params: StationSlugParams, cache: 'schedule' as const };

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
    handler({ svc, station, query }) {
      return scheduleRead(svc, station, query);
    },
  }),
  defineRoute({
    ...listener,
    method: 'get',
    path: '/api/v1/stations/{stationSlug}/programs',
    operationId: 'getPrograms',
    summary: 'Programs with a broadcast in a window, with presenters and weekly slots',
    description:
      'Same window rules as the schedule. A program is listed when one of its published, non-cancelled broadcasts overlaps the window.',
    module: 'programs',
    query: WindowQuery,
    responses: { 200: { description: 'The programs.', schema: ProgramsResponse }, ...listenerErrors },
    handler({ svc, station, query }) {
      return programsRead(svc, station, query);
    },
  }),
  defineRoute({
    ...listener,
    method: 'get',
    path: '/api/v1/stations/{stationSlug}/broadcast/current',
    operationId: 'getCurrentBroadcast',
    summary: 'The broadcast on air now, or null',
    description: 'With `stream={key}`: the broadcast on air at that stream’s heard time (now − latencySeconds), and `stream` in the body.',
    module: 'currentBroadcast',
    query: StreamQuery,
    responses: {
      200: { description: 'The current broadcast (null when nothing is on air).', schema: CurrentBroadcastResponse },
      ...listenerErrors,
    },
    handler({ svc, station, query }) {
      return currentBroadcastRead(svc, station, query.stream);
    },
  }),
  defineRoute({
    ...listener,
    method: 'get',
    path: '/api/v1/stations/{stationSlug}/schedule.ics',
    operationId: 'getScheduleCalendar',
    summary: 'The schedule as an iCalendar feed',
    description:
      'Same query parameters, window rules and credential as the schedule. One VEVENT per broadcast, UID `{broadcastId}@waveline`, times in UTC.',
    module: 'calendar',
    query: WindowQuery,
    responses: { 200: { description: 'iCalendar text (RFC 5545).', contentType: 'text/calendar' }, ...listenerErrors },
    handler({ svc, station, query }) {
      return calendarRead(svc, station, query);
    },
  }),
];

export const scheduleRoutes = [...scheduleListenerRoutes, ...scheduleAdminRoutes];
