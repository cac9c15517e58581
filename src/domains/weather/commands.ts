import type { Db } from '../../lib/db.ts';
import { ValidationError, type Issue } from '../../lib/errors.ts';
import { MAX_FUTURE_SKEW_SECONDS } from './model.ts';
import { presentTrafficSnapshot, presentWeatherSnapshot } from './presenter.ts';
import type { PutTrafficBody, PutWeatherBody, StoredReceipt } from './schemas.ts';

// Storing the normalised snapshot a collector pushed (admin PUT) or a provider poller fetched: one row
// per station, replaced as a whole (PUT semantics), presented once here so listener reads only wrap it.

const ms = (timestamp: string): number => new Date(timestamp).getTime();

function checkObservedAt(observedAt: string, now: Date, issues: Issue[]): void {
  if (ms(observedAt) > now.getTime() + MAX_FUTURE_SKEW_SECONDS * 1000) {
    issues.push({
      path: 'observedAt',
      code: 'in_future',
      message: `observedAt is more than ${MAX_FUTURE_SKEW_SECONDS} s ahead of the server clock`,
    });
  }
}

/** `later` must not be before `earlier` (both optional). */
function checkOrder(
  issues: Issue[],
  path: string,
  earlier: string | null | undefined,
  later: string | null | undefined,
  what: string,
): void {
  if (earlier != null && later != null && ms(later) < ms(earlier))
    issues.push({ path, code: 'invalid_range', message: `${path} must not be before ${what}` });
}

function fail(issues: Issue[]): void {
  if (issues.length) throw new ValidationError('Invalid request body.', issues);
}

/** The rules a schema cannot say: time order, min ≤ max, observedAt not in the future. */
export function checkWeather(body: PutWeatherBody, now: Date): void {
  const issues: Issue[] = [];
  checkObservedAt(body.observedAt, now, issues);
  body.snapshots.forEach((snapshot, i) => {
    checkOrder(issues, `snapshots.${i}.validUntil`, snapshot.validFrom, snapshot.validUntil, 'validFrom');
    const { temperatureMinC: min, temperatureMaxC: max } = snapshot;
    if (min != null && max != null && min > max)
      issues.push({
        path: `snapshots.${i}.temperatureMinC`,
        code: 'invalid_range',
        message: 'temperatureMinC must not be above temperatureMaxC',
      });
  });
  fail(issues);
}

/** Incident ids are unique within a snapshot; `snapshot.observedAt`, when sent, is the same instant as `observedAt`. */
export function checkTraffic(body: PutTrafficBody, now: Date): void {
  const issues: Issue[] = [];
  checkObservedAt(body.observedAt, now, issues);
  if (body.snapshot.observedAt !== undefined && ms(body.snapshot.observedAt) !== ms(body.observedAt)) {
    issues.push({ path: 'snapshot.observedAt', code: 'mismatch', message: 'snapshot.observedAt must equal observedAt (or be left out)' });
  }
  const seen = new Set<string>();
  body.snapshot.incidents.forEach((incident, i) => {
    if (seen.has(incident.id))
      issues.push({
        path: `snapshot.incidents.${i}.id`,
        code: 'duplicate',
        message: `incident id ${JSON.stringify(incident.id)} appears more than once`,
      });
    seen.add(incident.id);
    checkOrder(issues, `snapshot.incidents.${i}.endsAt`, incident.startsAt, incident.endsAt, 'startsAt');
  });
  fail(issues);
}

export async function storeWeather(db: Db, input: { stationId: string; body: PutWeatherBody; now: Date }): Promise<StoredReceipt> {
  const { stationId, body, now } = input;
  checkWeather(body, now);
  const observedAt = new Date(body.observedAt);
  const snapshots = body.snapshots.map(presentWeatherSnapshot);
  const json = JSON.stringify(snapshots);
  const row = { observed_at: observedAt, received_at: now, snapshots: json, snapshots_json: json };
  await db.transaction((trx) =>
    trx('weather_snapshots')
      .insert({ station_id: stationId, ...row })
      .onConflict('station_id')
      .merge(row),
  );
  return { observedAt: observedAt.toISOString(), receivedAt: now.toISOString(), count: snapshots.length };
}

export async function storeTraffic(db: Db, input: { stationId: string; body: PutTrafficBody; now: Date }): Promise<StoredReceipt> {
  const { stationId, body, now } = input;
  checkTraffic(body, now);
  const observedAt = new Date(body.observedAt);
  const snapshot = presentTrafficSnapshot(observedAt, body.snapshot);
  const json = JSON.stringify(snapshot);
  const row = { observed_at: observedAt, received_at: now, snapshot: json, snapshot_json: json };
  await db.transaction((trx) =>
    trx('traffic_snapshots')
      .insert({ station_id: stationId, ...row })
      .onConflict('station_id')
      .merge(row),
  );
  return { observedAt: observedAt.toISOString(), receivedAt: now.toISOString(), count: snapshot.incidents.length };
}
