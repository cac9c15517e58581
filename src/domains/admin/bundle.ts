import { DateTime } from 'luxon';
import type { Issue } from '../../lib/errors.ts';
import { suggest } from '../../http/validate.ts';
import type { FieldDefinitionInput } from '../content/schemas.ts';
import type { RundownBody } from '../schedule/schemas.ts';
import type { Bundle, BundleBroadcast, BundleRundown } from './schemas.ts';

// What only the bundle as a whole can tell: ids unique within it, references from one part to another
// (media keys, rundown broadcasts), the order parts must be written in, and times relative to the
// import day. Everything about a single thing is left to the domain command that writes it.

type Values = Record<string, unknown>;
type Visit = (value: unknown, path: string) => unknown;

const isPlainObject = (value: unknown): value is Values => typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * A copy of record values with every value of a `media` or `content` field (nested groups and
 * repeated fields included) replaced by `visit`'s answer; `undefined` leaves the value out. Values the
 * field definitions do not explain are kept as they are for the domain validation to judge.
 */
export function mapReferences(
  fields: readonly FieldDefinitionInput[],
  values: Values,
  kind: 'media' | 'content',
  visit: Visit,
  path = 'values',
): Values {
  const out: Values = {};
  for (const [key, value] of Object.entries(values)) {
    const field = fields.find((f) => f.key === key);
    const at = `${path}.${key}`;
    if (!field || value === null || value === undefined || (field.multiple && !Array.isArray(value))) {
      out[key] = value;
    } else if (field.kind === kind) {
      const mapped = field.multiple
        ? (value as unknown[]).map((v, i) => visit(v, `${at}.${i}`)).filter((v) => v !== undefined)
        : visit(value, at);
      if (mapped !== undefined) out[key] = mapped;
    } else if (field.kind === 'group' && field.fields) {
      const nested = field.fields;
      const one = (v: unknown, p: string) => (isPlainObject(v) ? mapReferences(nested, v, kind, visit, p) : v);
      out[key] = field.multiple ? (value as unknown[]).map((v, i) => one(v, `${at}.${i}`)) : one(value, at);
    } else {
      out[key] = value;
    }
  }
  return out;
}

/** Field definitions of each bundle type, by key (records of other types have none to go by). */
export function fieldsByType(bundle: Bundle): Map<string, FieldDefinitionInput[]> {
  return new Map((bundle.types ?? []).map((t) => [t.key, t.fields]));
}

/** Ids of other bundle records a record's content fields reference. */
export function contentReferences(
  fields: readonly FieldDefinitionInput[],
  values: Values,
  self: string,
  bundleIds: ReadonlySet<string>,
): string[] {
  const found: string[] = [];
  mapReferences(fields, values, 'content', (value) => {
    const id = typeof value === 'string' ? value.toLowerCase() : '';
    if (id !== self && bundleIds.has(id)) found.push(id);
    return value;
  });
  return found;
}

function duplicateIssues(ids: readonly string[], path: (i: number) => string, what: string): Issue[] {
  const seen = new Set<string>();
  return ids.flatMap((raw, i) => {
    const id = raw.toLowerCase();
    if (!seen.has(id)) {
      seen.add(id);
      return [];
    }
    return [{ path: path(i), code: 'duplicate', message: `${what} ${raw} appears more than once in the bundle` }];
  });
}

function mediaKeyIssue(value: unknown, path: string, keys: readonly string[]): Issue | null {
  if (typeof value !== 'string' || keys.includes(value)) return null;
  const issue: Issue = { path, code: 'not_found', message: `${path} must name the key of a media entry of the bundle, not "${value}"` };
  const suggestion = suggest(value, keys);
  if (suggestion) issue.suggestion = suggestion;
  return issue;
}

function referenceIssues(bundle: Bundle): Issue[] {
  const issues: Issue[] = [];
  const mediaKeys = (bundle.media ?? []).map((m) => m.key);
  const types = fieldsByType(bundle);
  (bundle.records ?? []).forEach((record, i) => {
    (record.media ?? []).forEach((ref, j) => {
      const which = ref.key !== undefined ? 'key' : 'versionId';
      const issue = mediaKeyIssue(ref.key ?? ref.versionId, `records.${i}.media.${j}.${which}`, mediaKeys);
      if (issue) issues.push(issue);
    });
    mapReferences(types.get(record.type) ?? [], record.values, 'media', (value, path) => {
      const issue = mediaKeyIssue(value, `records.${i}.${path}`, mediaKeys);
      if (issue) issues.push(issue);
      return value;
    });
  });
  const broadcastIds = new Set((bundle.broadcasts ?? []).map((b) => b.id.toLowerCase()));
  (bundle.rundowns ?? []).forEach((rundown, i) => {
    if (!broadcastIds.has(rundown.broadcastId.toLowerCase())) {
      issues.push({
        path: `rundowns.${i}.broadcastId`,
        code: 'not_found',
        message: `broadcast ${rundown.broadcastId} is not one of the bundle's broadcasts`,
      });
    }
    rundown.items.forEach((item, j) => {
      if (item.offsetSeconds !== undefined && item.plannedStartsAt !== undefined) {
        issues.push({
          path: `rundowns.${i}.items.${j}.offsetSeconds`,
          code: 'not_allowed',
          message: 'give either plannedStartsAt or offsetSeconds, not both',
        });
      }
    });
  });
  return issues;
}

function broadcastTimeIssues(broadcasts: readonly BundleBroadcast[]): Issue[] {
  return broadcasts.flatMap((b, i): Issue[] => {
    const absolute = b.startsAt !== undefined || b.endsAt !== undefined;
    if (b.relative && absolute) {
      return [{ path: `broadcasts.${i}.relative`, code: 'not_allowed', message: 'give either startsAt and endsAt, or relative, not both' }];
    }
    if (b.relative) return [];
    const missing = (['startsAt', 'endsAt'] as const).filter((k) => b[k] === undefined);
    return missing.map((k) => ({
      path: `broadcasts.${i}.${k}`,
      code: 'required',
      message: `broadcasts.${i}.${k} is required unless the broadcast gives relative times`,
    }));
  });
}

/** Every issue found in the bundle as a whole, before anything is written. */
export function checkBundle(bundle: Bundle): Issue[] {
  return [
    ...duplicateIssues(
      (bundle.types ?? []).map((t) => t.key),
      (i) => `types.${i}.key`,
      'content type',
    ),
    ...duplicateIssues(
      (bundle.media ?? []).map((m) => m.key),
      (i) => `media.${i}.key`,
      'media key',
    ),
    ...duplicateIssues(
      (bundle.records ?? []).map((r) => r.id),
      (i) => `records.${i}.id`,
      'record',
    ),
    ...duplicateIssues(
      (bundle.presenters ?? []).map((p) => p.id),
      (i) => `presenters.${i}.id`,
      'presenter',
    ),
    ...duplicateIssues(
      (bundle.programs ?? []).map((p) => p.id),
      (i) => `programs.${i}.id`,
      'program',
    ),
    ...duplicateIssues(
      (bundle.broadcasts ?? []).map((b) => b.id),
      (i) => `broadcasts.${i}.id`,
      'broadcast',
    ),
    ...duplicateIssues(
      (bundle.rundowns ?? []).map((r) => r.broadcastId),
      (i) => `rundowns.${i}.broadcastId`,
      'rundown of broadcast',
    ),
    ...broadcastTimeIssues(bundle.broadcasts ?? []),
    ...referenceIssues(bundle),
  ];
}

/**
 * Indices in an order where each comes after the ones it depends on (bundle order otherwise), and
 * the rest: those in (or behind) a dependency cycle, in bundle order.
 */
export function dependencyOrder(dependencies: ReadonlyArray<readonly number[]>): { ordered: number[]; rest: number[] } {
  const placed = new Set<number>();
  const ordered: number[] = [];
  let progress = true;
  while (progress) {
    progress = false;
    dependencies.forEach((deps, i) => {
      if (placed.has(i) || !deps.every((d) => d === i || placed.has(d))) return;
      placed.add(i);
      ordered.push(i);
      progress = true;
    });
  }
  return { ordered, rest: dependencies.map((_, i) => i).filter((i) => !placed.has(i)) };
}

/**
 * A broadcast's instants (ISO, in UTC): as given, or from `relative` — the local start time on the day
 * `dayOffset` days after the import day in the station's zone (a start in a DST gap moves forward, as
 * Luxon does); the end is `durationMinutes` of elapsed time later.
 */
export function broadcastTimes(broadcast: BundleBroadcast, timezone: string, now: Date): { startsAt: string; endsAt: string } {
  // Answered in UTC like every timestamp of the API, whatever offset the bundle wrote (a string that
  // is no instant, e.g. a leap second, is left for saveBroadcast to refuse with its 400).
  const utc = (iso: string) => (Number.isNaN(Date.parse(iso)) ? iso : new Date(iso).toISOString());
  if (!broadcast.relative) return { startsAt: utc(broadcast.startsAt as string), endsAt: utc(broadcast.endsAt as string) };
  const { dayOffset, start, durationMinutes } = broadcast.relative;
  const [hour, minute] = start.split(':').map(Number);
  const startsAt = DateTime.fromJSDate(now, { zone: timezone }).startOf('day').plus({ days: dayOffset }).set({ hour, minute }).toMillis();
  return { startsAt: new Date(startsAt).toISOString(), endsAt: new Date(startsAt + durationMinutes * 60_000).toISOString() };
}

/** Rundown items as the admin route takes them: `offsetSeconds` becomes a planned start. */
export function rundownItems(items: BundleRundown['items'], startsAt: string): RundownBody['items'] {
  const start = new Date(startsAt).getTime();
  return items.map(({ offsetSeconds, ...item }) =>
    offsetSeconds === undefined ? item : { ...item, plannedStartsAt: new Date(start + offsetSeconds * 1000).toISOString() },
  );
}
