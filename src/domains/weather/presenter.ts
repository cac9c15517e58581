import { freshness } from '../../lib/freshness.ts';
import { TRAFFIC_THRESHOLD_SECONDS, WEATHER_THRESHOLD_SECONDS, type StoredSnapshot } from './model.ts';
import type { Incident, IncidentInput, PutTrafficBody, TrafficSnapshot, WeatherSnapshot, WeatherSnapshotInput } from './schemas.ts';

// Snapshots are presented once, when stored (every key present, unknowns null, timestamps in UTC);
// a listener read only wraps the stored JSON text with the timezone and freshness of that moment.

const utc = (timestamp: string): string => new Date(timestamp).toISOString();
const utcOrNull = (timestamp: string | null | undefined): string | null => (timestamp == null ? null : utc(timestamp));
const orNull = <T>(value: T | null | undefined): T | null => value ?? null;

export function presentWeatherSnapshot(input: WeatherSnapshotInput): WeatherSnapshot {
  return {
    locationId: input.locationId,
    locationName: input.locationName,
    kind: input.kind,
    validFrom: utc(input.validFrom),
    validUntil: utcOrNull(input.validUntil),
    conditionCode: input.conditionCode,
    temperatureC: orNull(input.temperatureC),
    feelsLikeC: orNull(input.feelsLikeC),
    temperatureMinC: orNull(input.temperatureMinC),
    temperatureMaxC: orNull(input.temperatureMaxC),
    precipitationProbability: orNull(input.precipitationProbability),
    precipitationMm: orNull(input.precipitationMm),
    windSpeedKph: orNull(input.windSpeedKph),
    windDirectionDeg: orNull(input.windDirectionDeg),
    humidity: orNull(input.humidity),
    uvIndex: orNull(input.uvIndex),
  };
}

export function presentIncident(input: IncidentInput): Incident {
  return {
    id: input.id,
    type: input.type,
    severity: input.severity,
    road: orNull(input.road),
    direction: orNull(input.direction),
    description: orNull(input.description),
    from: orNull(input.from),
    to: orNull(input.to),
    delaySeconds: orNull(input.delaySeconds),
    lengthMeters: orNull(input.lengthMeters),
    startsAt: utcOrNull(input.startsAt),
    endsAt: utcOrNull(input.endsAt),
    location: input.location ? { lat: input.location.lat, lon: input.location.lon } : null,
  };
}

export function presentTrafficSnapshot(observedAt: Date, snapshot: PutTrafficBody['snapshot']): TrafficSnapshot {
  return { observedAt: observedAt.toISOString(), area: orNull(snapshot.area), incidents: snapshot.incidents.map(presentIncident) };
}

/** `…/weather` body: `snapshots` is `[]` while nothing was ever stored (freshness `empty`). */
export function weatherJson(timezone: string, stored: StoredSnapshot | null, now: Date): string {
  const state = freshness(stored?.observedAt ?? null, stored?.receivedAt ?? null, WEATHER_THRESHOLD_SECONDS, now);
  return `{"contractVersion":1,"timezone":${JSON.stringify(timezone)},"freshness":${JSON.stringify(state)},"snapshots":${stored ? stored.json : '[]'}}`;
}

/** `…/traffic` body: `snapshot` is null while nothing was ever stored (freshness `empty`). */
export function trafficJson(timezone: string, stored: StoredSnapshot | null, now: Date): string {
  const state = freshness(stored?.observedAt ?? null, stored?.receivedAt ?? null, TRAFFIC_THRESHOLD_SECONDS, now);
  return `{"contractVersion":1,"timezone":${JSON.stringify(timezone)},"freshness":${JSON.stringify(state)},"snapshot":${stored ? stored.json : 'null'}}`;
}
