import { DateTime } from 'luxon';
import { ValidationError, type Issue } from '../../lib/errors.ts';
import { MAX_WINDOW_DAYS } from './model.ts';

/**
 * A schedule window: inclusive local dates and the instants they cover in the station's zone,
 * [fromDate 00:00, throughDate + 1 00:00). Luxon does the zone arithmetic, so a 23- or 25-hour DST
 * day is exactly as long as it is locally.
 */
export interface ScheduleWindow {
  fromDate: string;
  throughDate: string;
  start: Date;
  end: Date;
}

const ISO_DATE = /^\d{4}-\d{2}-\d{2}$/;
/** The last date YYYY-MM-DD can write: a defaulted throughDate stops there. */
const LAST_DATE = DateTime.fromISO('9999-12-31', { zone: 'UTC' });

/** The local calendar date of an instant in a zone. */
export function localDate(at: Date, timezone: string): string {
  return DateTime.fromJSDate(at, { zone: timezone }).toISODate() as string;
}

/** The first instant of a local date (later than 00:00 when the zone skips midnight). */
export function startOfLocalDate(date: string, timezone: string): Date {
  return DateTime.fromISO(date, { zone: timezone }).startOf('day').toJSDate();
}

/** Adds whole local days to a local date. */
export function addDays(date: string, days: number): string {
  return DateTime.fromISO(date, { zone: 'UTC' }).plus({ days }).toISODate() as string;
}

/** The start of the next local day after `at`. */
export function nextLocalMidnight(at: Date, timezone: string): Date {
  return startOfLocalDate(addDays(localDate(at, timezone), 1), timezone);
}

function parseDate(value: string, path: string, issues: Issue[]): DateTime | null {
  const parsed = ISO_DATE.test(value) ? DateTime.fromISO(value, { zone: 'UTC' }) : null;
  if (!parsed || !parsed.isValid) {
    issues.push({ path, code: 'invalid_format', message: `${path} must be a calendar date YYYY-MM-DD, got "${value}"` });
    return null;
  }
  return parsed;
}

/** The window covering [fromDate, throughDate] in a zone. */
export function windowFor(fromDate: string, throughDate: string, timezone: string): ScheduleWindow {
  return {
    fromDate,
    throughDate,
    start: startOfLocalDate(fromDate, timezone),
    end: startOfLocalDate(addDays(throughDate, 1), timezone),
  };
}

/**
 * Resolves the `fromDate`/`throughDate` query: `fromDate` defaults to today in the station's zone,
 * `throughDate` to `fromDate` + 6 days (at most 9999-12-31); at most 31 inclusive days; `throughDate`
 * not before `fromDate`.
 */
export function resolveWindow(query: { fromDate?: string; throughDate?: string }, timezone: string, now: Date): ScheduleWindow {
  const issues: Issue[] = [];
  const from =
    query.fromDate === undefined
      ? DateTime.fromISO(localDate(now, timezone), { zone: 'UTC' })
      : parseDate(query.fromDate, 'fromDate', issues);
  const through =
    query.throughDate === undefined
      ? from && DateTime.min(from.plus({ days: 6 }), LAST_DATE)
      : parseDate(query.throughDate, 'throughDate', issues);
  if (from && through) {
    const days = through.diff(from, 'days').days + 1;
    if (days < 1) {
      issues.push({ path: 'throughDate', code: 'out_of_range', message: `throughDate must not be before fromDate (${from.toISODate()})` });
    } else if (days > MAX_WINDOW_DAYS) {
      issues.push({
        path: 'throughDate',
        code: 'too_big',
        message: `the window spans at most ${MAX_WINDOW_DAYS} inclusive days; ${days} requested`,
        suggestion: from.plus({ days: MAX_WINDOW_DAYS - 1 }).toISODate() as string,
      });
    }
  }
  if (issues.length > 0 || !from || !through) throw new ValidationError('Invalid schedule window.', issues);
  return windowFor(from.toISODate() as string, through.toISODate() as string, timezone);
}
