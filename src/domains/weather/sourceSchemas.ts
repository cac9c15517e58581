import { Type, Nullable, StringEnum, type Static } from '../../http/schema.ts';

// Provider sources a worker polls (docs/weather-traffic.md, "Provider polling"). One per station and
// feed: weather from Open-Meteo, traffic from TomTom Traffic Incident Details v5.

const HttpUrl = Type.String({ format: 'uri', pattern: '^https?://', maxLength: 2048 });
const Interval = (fallback: number) =>
  Type.Integer({ minimum: 60, maximum: 86400, default: fallback, description: 'seconds between polls' });
const Latitude = Type.Number({ minimum: -90, maximum: 90 });
const Longitude = Type.Number({ minimum: -180, maximum: 180 });
const Label = (max: number) => Type.String({ minLength: 1, maxLength: max, pattern: '^[^\\u0000]*$' });

export const OpenMeteoSourceBody = Type.Object(
  {
    provider: StringEnum(['open-meteo'] as const),
    latitude: Latitude,
    longitude: Longitude,
    locationId: Label(100),
    locationName: Label(200),
    intervalSeconds: Type.Optional(Interval(900)),
    hourlyHours: Type.Optional(Type.Integer({ minimum: 0, maximum: 168, default: 24, description: 'hourly forecasts to keep' })),
    dailyDays: Type.Optional(Type.Integer({ minimum: 0, maximum: 16, default: 7, description: 'daily forecasts to keep' })),
    baseUrl: Type.Optional(HttpUrl),
  },
  { additionalProperties: false },
);
export type OpenMeteoSourceBody = Static<typeof OpenMeteoSourceBody>;

export const TomTomSourceBody = Type.Object(
  {
    provider: StringEnum(['tomtom'] as const),
    apiKey: Type.String({
      minLength: 1,
      maxLength: 200,
      pattern: '^[A-Za-z0-9_-]+$',
      description: 'TomTom API key; stored, never shown again',
    }),
    bbox: Type.Object({ minLat: Latitude, minLon: Longitude, maxLat: Latitude, maxLon: Longitude }, { additionalProperties: false }),
    area: Type.Optional(Nullable(Label(200))),
    language: Type.Optional(Type.String({ pattern: '^[a-z]{2}-[A-Z]{2}$', default: 'en-GB' })),
    intervalSeconds: Type.Optional(Interval(300)),
    baseUrl: Type.Optional(HttpUrl),
  },
  { additionalProperties: false },
);
export type TomTomSourceBody = Static<typeof TomTomSourceBody>;

export const FeedSourceView = Type.Object({
  feed: StringEnum(['weather', 'traffic'] as const),
  provider: Type.String(),
  intervalSeconds: Type.Integer(),
  settings: Type.Record(Type.String(), Type.Unknown(), { description: 'provider parameters; an API key is never shown' }),
  lastPolledAt: Nullable(Type.String()),
  lastError: Nullable(Type.String()),
});
export type FeedSourceView = Static<typeof FeedSourceView>;
