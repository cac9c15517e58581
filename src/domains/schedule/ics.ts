import ical, { ICalEventStatus } from 'ical-generator';
import type { ResolvedBroadcast } from './model.ts';

// The iCalendar feed (decisions.md, "schedule.ics"). ical-generator does the RFC 5545 work: CRLF line
// ends, folding at 75 octets, escaping of `\`, `;`, `,` and newlines in text values.

export const ICS_CONTENT_TYPE = 'text/calendar; charset=utf-8';

export const broadcastUid = (id: string): string => `${id}@waveline`;

function description(broadcast: ResolvedBroadcast): string {
  const lines = [`Program: ${broadcast.program.title}`];
  if (broadcast.presenters.length) lines.push(`Presenters: ${broadcast.presenters.map((p) => p.title).join(', ')}`);
  if (broadcast.row.cancelled && broadcast.row.cancellation_reason) lines.push(`Cancelled: ${broadcast.row.cancellation_reason}`);
  return lines.join('\n');
}

/**
 * The last change to anything the event shows (broadcast, program, presenters). It is both
 * LAST-MODIFIED and DTSTAMP, so the text — and its ETag — only change when the schedule does.
 */
function lastModified(broadcast: ResolvedBroadcast): Date {
  const times = [broadcast.row.updated_at, broadcast.program.updatedAt, ...broadcast.presenters.map((p) => p.updatedAt)];
  return new Date(Math.max(...times.map((t) => t.getTime())));
}

export function buildCalendar(station: { name: string; timezone: string }, broadcasts: ResolvedBroadcast[]): string {
  const calendar = ical({
    name: station.name,
    prodId: { company: 'Waveline', product: 'Schedule', language: 'EN' },
    // X-WR-TIMEZONE only names the zone for display; DTSTART/DTEND stay in UTC (no TZID, no VTIMEZONE).
    x: [['X-WR-TIMEZONE', station.timezone]],
  });
  for (const broadcast of broadcasts) {
    const modified = lastModified(broadcast);
    calendar.createEvent({
      id: broadcastUid(broadcast.row.id),
      start: broadcast.row.starts_at,
      end: broadcast.row.ends_at,
      stamp: modified,
      lastModified: modified,
      summary: broadcast.row.title ?? broadcast.program.title,
      description: description(broadcast),
      status: broadcast.row.cancelled ? ICalEventStatus.CANCELLED : ICalEventStatus.CONFIRMED,
    });
  }
  return calendar.toString();
}
