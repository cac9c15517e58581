import ical, { escape, foldLines, ICalEventStatus } from 'ical-generator';
import type { ResolvedBroadcast } from './model.ts';

// The iCalendar feed (docs/schedule.md#calendar-scheduleics). ical-generator does the RFC 5545 work: CRLF line
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
    // ical-generator writes the calendar name without TEXT escaping; escape it here.
    name: escape(station.name, false),
    prodId: { company: 'Waveline', product: 'Schedule', language: 'EN' },
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
  const text = withCalendarProperty(calendar.toString(), 'X-WR-TIMEZONE', station.timezone);
  // Every content line ends in CRLF, the last one too (ical-generator leaves it off).
  return text.endsWith('\r\n') ? text : `${text}\r\n`;
}

/**
 * Adds a calendar property before the first component. (ical-generator writes its `x` properties
 * after the events, where RFC 5545's grammar has no calendar properties.) X-WR-TIMEZONE only names
 * the station's zone for display: DTSTART/DTEND stay in UTC, so no TZID or VTIMEZONE is needed.
 */
function withCalendarProperty(text: string, name: string, value: string): string {
  const at = [text.indexOf('BEGIN:VEVENT'), text.indexOf('END:VCALENDAR')].filter((i) => i >= 0).reduce((a, b) => Math.min(a, b));
  return `${text.slice(0, at)}${foldLines(`${name}:${escape(value, false)}`)}\r\n${text.slice(at)}`;
}
