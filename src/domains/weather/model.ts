// Weather and traffic vocabulary (docs/weather-traffic.md#listener-reads).

export const CONDITION_CODES = [
  'Clear',
  'MostlyClear',
  'PartlyCloudy',
  'Cloudy',
  'Fog',
  'Drizzle',
  'FreezingDrizzle',
  'Rain',
  'HeavyRain',
  'FreezingRain',
  'Snow',
  'HeavySnow',
  'Flurries',
  'Showers',
  'SnowShowers',
  'Thunderstorm',
  'SevereThunderstorm',
] as const;
export type ConditionCode = (typeof CONDITION_CODES)[number];

export const SNAPSHOT_KINDS = ['current', 'hourly', 'daily'] as const;
export const INCIDENT_TYPES = ['accident', 'congestion', 'roadworks', 'closure', 'hazard', 'weather', 'other'] as const;
export const INCIDENT_SEVERITIES = ['minor', 'moderate', 'major', 'unknown'] as const;

/** Freshness thresholds (docs/now-playing.md#freshness-and-timing): weather is fresh for an hour, traffic for 15 minutes. */
export const WEATHER_THRESHOLD_SECONDS = 3600;
export const TRAFFIC_THRESHOLD_SECONDS = 900;

/** How far ahead of the server clock an `observedAt` may be (clock skew), as for now-playing ingest. */
export const MAX_FUTURE_SKEW_SECONDS = 300;

export type Feed = 'weather' | 'traffic';

/** The stored row of either feed: when it was observed and received, and the presented JSON text. */
export interface StoredSnapshot {
  observedAt: Date;
  receivedAt: Date;
  /** Weather: the presented `snapshots` array; traffic: the presented `snapshot` object. */
  json: string;
}
