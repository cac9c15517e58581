import { Type, Nullable, StringEnum, type Static, type TSchema } from '../../http/schema.ts';
import { CONDITION_CODES, INCIDENT_SEVERITIES, INCIDENT_TYPES, SNAPSHOT_KINDS } from './model.ts';

// Shapes of docs/weather-traffic.md#listener-reads (Weather, Traffic). Admin input is checked strictly: unknown
// properties, wrong types, out-of-range numbers and timestamps without a zone are 400. A value that may
// be null (unknown) may also be left out; it is delivered as null.

const IsoTimestamp = Type.String({ format: 'date-time', maxLength: 64, description: 'ISO 8601 timestamp with a zone; delivered in UTC' });
// Postgres jsonb cannot hold NUL characters.
const Label = (max: number) => Type.String({ minLength: 1, maxLength: max, pattern: '^[^\\u0000]*$' });
const Unknowable = <T extends TSchema>(schema: T) => Type.Optional(Nullable(schema));
const Measure = (minimum: number, maximum: number, description: string) => Unknowable(Type.Number({ minimum, maximum, description }));

export const WeatherSnapshotInput = Type.Object(
  {
    locationId: Label(100),
    locationName: Label(200),
    kind: StringEnum(SNAPSHOT_KINDS),
    validFrom: IsoTimestamp,
    validUntil: Unknowable(IsoTimestamp),
    conditionCode: StringEnum(CONDITION_CODES),
    temperatureC: Measure(-100, 100, '°C'),
    feelsLikeC: Measure(-100, 100, '°C'),
    temperatureMinC: Measure(-100, 100, '°C'),
    temperatureMaxC: Measure(-100, 100, '°C'),
    precipitationProbability: Measure(0, 100, 'percent'),
    precipitationMm: Measure(0, 2000, 'millimetres'),
    windSpeedKph: Measure(0, 500, 'km/h'),
    windDirectionDeg: Measure(0, 360, 'degrees, direction the wind comes from'),
    humidity: Measure(0, 100, 'relative humidity, percent'),
    uvIndex: Measure(0, 30, 'UV index'),
  },
  { additionalProperties: false },
);
export type WeatherSnapshotInput = Static<typeof WeatherSnapshotInput>;

export const PutWeatherBody = Type.Object(
  { observedAt: IsoTimestamp, snapshots: Type.Array(WeatherSnapshotInput, { maxItems: 1000 }) },
  { additionalProperties: false },
);
export type PutWeatherBody = Static<typeof PutWeatherBody>;

const Coordinates = Type.Object(
  { lat: Type.Number({ minimum: -90, maximum: 90 }), lon: Type.Number({ minimum: -180, maximum: 180 }) },
  { additionalProperties: false },
);

export const IncidentInput = Type.Object(
  {
    id: Label(200),
    type: StringEnum(INCIDENT_TYPES),
    severity: StringEnum(INCIDENT_SEVERITIES),
    road: Unknowable(Label(200)),
    direction: Unknowable(Label(200)),
    description: Unknowable(Label(2000)),
    from: Unknowable(Label(200)),
    to: Unknowable(Label(200)),
    delaySeconds: Measure(0, 2_592_000, 'extra travel time, seconds'),
    lengthMeters: Measure(0, 10_000_000, 'length of the affected stretch, metres'),
    startsAt: Unknowable(IsoTimestamp),
    endsAt: Unknowable(IsoTimestamp),
    location: Unknowable(Coordinates),
  },
  { additionalProperties: false },
);
export type IncidentInput = Static<typeof IncidentInput>;

export const PutTrafficBody = Type.Object(
  {
    observedAt: IsoTimestamp,
    snapshot: Type.Object(
      {
        observedAt: Type.Optional(IsoTimestamp),
        area: Unknowable(Label(200)),
        incidents: Type.Array(IncidentInput, { maxItems: 2000 }),
      },
      { additionalProperties: false },
    ),
  },
  { additionalProperties: false },
);
export type PutTrafficBody = Static<typeof PutTrafficBody>;

export const StoredReceipt = Type.Object({
  observedAt: Type.String(),
  receivedAt: Type.String(),
  count: Type.Integer({ description: 'snapshots or incidents stored' }),
});
export type StoredReceipt = Static<typeof StoredReceipt>;

// Listener output.

const Freshness = Type.Object({
  status: StringEnum(['fresh', 'stale', 'empty'] as const),
  thresholdSeconds: Nullable(Type.Integer()),
  ageSeconds: Nullable(Type.Integer()),
  observedAt: Nullable(Type.String()),
  receivedAt: Nullable(Type.String()),
});

const Num = Nullable(Type.Number());

export const WeatherSnapshot = Type.Object({
  locationId: Type.String(),
  locationName: Type.String(),
  kind: StringEnum(SNAPSHOT_KINDS),
  validFrom: Type.String(),
  validUntil: Nullable(Type.String()),
  conditionCode: StringEnum(CONDITION_CODES),
  temperatureC: Num,
  feelsLikeC: Num,
  temperatureMinC: Num,
  temperatureMaxC: Num,
  precipitationProbability: Num,
  precipitationMm: Num,
  windSpeedKph: Num,
  windDirectionDeg: Num,
  humidity: Num,
  uvIndex: Num,
});
export type WeatherSnapshot = Static<typeof WeatherSnapshot>;

export const WeatherResponse = Type.Object(
  {
    contractVersion: Type.Literal(1),
    timezone: Type.String(),
    freshness: Freshness,
    snapshots: Type.Array(WeatherSnapshot),
  },
  { title: 'Weather' },
);

const Text = Nullable(Type.String());

export const Incident = Type.Object({
  id: Type.String(),
  type: StringEnum(INCIDENT_TYPES),
  severity: StringEnum(INCIDENT_SEVERITIES),
  road: Text,
  direction: Text,
  description: Text,
  from: Text,
  to: Text,
  delaySeconds: Num,
  lengthMeters: Num,
  startsAt: Text,
  endsAt: Text,
  location: Nullable(Type.Object({ lat: Type.Number(), lon: Type.Number() })),
});
export type Incident = Static<typeof Incident>;

export const TrafficSnapshot = Type.Object({ observedAt: Type.String(), area: Text, incidents: Type.Array(Incident) });
export type TrafficSnapshot = Static<typeof TrafficSnapshot>;

export const TrafficResponse = Type.Object(
  {
    contractVersion: Type.Literal(1),
    timezone: Type.String(),
    freshness: Freshness,
    snapshot: Nullable(TrafficSnapshot),
  },
  { title: 'Traffic' },
);
