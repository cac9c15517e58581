import { DateTime } from 'luxon';
import { Type, Nullable, type Static } from '../../../http/schema.ts';
import type { ConditionCode } from '../model.ts';
import type { PutWeatherBody, WeatherSnapshotInput } from '../schemas.ts';
import type { OpenMeteoSettings } from '../sources.ts';

// Open-Meteo forecast API (https://open-meteo.com/en/docs): `GET /v1/forecast` with `current`, `hourly`
// and `daily` variable lists; `timeformat=unixtime` gives Unix seconds, `timezone` makes daily values
// local days of the station. Weather codes are WMO 4677 codes as listed in those docs.

const CURRENT = [
  'weather_code',
  'temperature_2m',
  'apparent_temperature',
  'relative_humidity_2m',
  'precipitation',
  'wind_speed_10m',
  'wind_direction_10m',
  'uv_index',
];
const HOURLY = [
  'weather_code',
  'temperature_2m',
  'apparent_temperature',
  'precipitation_probability',
  'precipitation',
  'relative_humidity_2m',
  'wind_speed_10m',
  'wind_direction_10m',
  'uv_index',
];
const DAILY = [
  'weather_code',
  'temperature_2m_max',
  'temperature_2m_min',
  'precipitation_sum',
  'precipitation_probability_max',
  'wind_speed_10m_max',
  'wind_direction_10m_dominant',
  'uv_index_max',
];

/** WMO weather interpretation codes → the `conditionCode` of docs/weather-traffic.md#listener-reads. */
const WMO: Record<number, ConditionCode> = {
  0: 'Clear',
  1: 'MostlyClear',
  2: 'PartlyCloudy',
  3: 'Cloudy',
  45: 'Fog',
  48: 'Fog',
  51: 'Drizzle',
  53: 'Drizzle',
  55: 'Drizzle',
  56: 'FreezingDrizzle',
  57: 'FreezingDrizzle',
  61: 'Rain',
  63: 'Rain',
  65: 'HeavyRain',
  66: 'FreezingRain',
  67: 'FreezingRain',
  71: 'Flurries',
  73: 'Snow',
  75: 'HeavySnow',
  77: 'Snow',
  80: 'Showers',
  81: 'Showers',
  82: 'HeavyRain',
  85: 'SnowShowers',
  86: 'SnowShowers',
  95: 'Thunderstorm',
  96: 'SevereThunderstorm',
  99: 'SevereThunderstorm',
};

const Values = Type.Array(Nullable(Type.Number()));
const Series = (names: string[]) =>
  Type.Object({ time: Type.Array(Type.Integer()), ...Object.fromEntries(names.map((n) => [n, Type.Optional(Values)])) });

/** The part of the answer we read; anything else Open-Meteo sends is ignored. */
export const OpenMeteoForecast = Type.Object({
  current: Type.Object({
    time: Type.Integer(),
    interval: Type.Integer(),
    ...Object.fromEntries(CURRENT.map((n) => [n, Type.Optional(Nullable(Type.Number()))])),
  }),
  hourly: Type.Optional(Series(HOURLY)),
  daily: Type.Optional(Series(DAILY)),
});
export type OpenMeteoForecast = Static<typeof OpenMeteoForecast>;
type Row = Record<string, number | null>;

export function openMeteoUrl(settings: OpenMeteoSettings, timezone: string): string {
  const url = new URL('/v1/forecast', settings.baseUrl);
  url.searchParams.set('latitude', String(settings.latitude));
  url.searchParams.set('longitude', String(settings.longitude));
  url.searchParams.set('current', CURRENT.join(','));
  if (settings.hourlyHours > 0) {
    url.searchParams.set('hourly', HOURLY.join(','));
    url.searchParams.set('forecast_hours', String(settings.hourlyHours));
  }
  if (settings.dailyDays > 0) {
    url.searchParams.set('daily', DAILY.join(','));
    url.searchParams.set('forecast_days', String(settings.dailyDays));
  }
  url.searchParams.set('wind_speed_unit', 'kmh');
  url.searchParams.set('timeformat', 'unixtime');
  url.searchParams.set('timezone', timezone);
  return url.toString();
}

const iso = (unixSeconds: number): string => new Date(unixSeconds * 1000).toISOString();

/** Row `i` of a series as {variable: value}; a variable Open-Meteo left out is unknown (null). */
function rowAt(series: object, names: string[], i: number): Row {
  const columns = series as Record<string, Array<number | null> | undefined>;
  return Object.fromEntries(names.map((n) => [n, columns[n]?.[i] ?? null]));
}

function pick(values: object, names: string[]): Row {
  const all = values as Record<string, number | null | undefined>;
  return Object.fromEntries(names.map((n) => [n, all[n] ?? null]));
}

function snapshot(
  settings: OpenMeteoSettings,
  kind: WeatherSnapshotInput['kind'],
  validFrom: number,
  validUntil: number,
  code: number | null,
  values: Partial<WeatherSnapshotInput>,
): WeatherSnapshotInput | null {
  const conditionCode = code === null ? undefined : WMO[code];
  // A code outside the WMO table says nothing we could deliver; that entry is left out.
  if (!conditionCode) return null;
  return {
    locationId: settings.locationId,
    locationName: settings.locationName,
    kind,
    validFrom: iso(validFrom),
    validUntil: iso(validUntil),
    conditionCode,
    ...values,
  };
}

/** An Open-Meteo forecast as the body of `PUT …/weather`. */
export function openMeteoToWeather(forecast: OpenMeteoForecast, settings: OpenMeteoSettings, timezone: string): PutWeatherBody {
  const { time, interval } = forecast.current;
  const c = pick(forecast.current, CURRENT);
  const snapshots: Array<WeatherSnapshotInput | null> = [
    snapshot(settings, 'current', time, time + interval, c.weather_code, {
      temperatureC: c.temperature_2m,
      feelsLikeC: c.apparent_temperature,
      humidity: c.relative_humidity_2m,
      precipitationMm: c.precipitation,
      windSpeedKph: c.wind_speed_10m,
      windDirectionDeg: c.wind_direction_10m,
      uvIndex: c.uv_index,
    }),
  ];
  const hourly = forecast.hourly;
  hourly?.time.slice(0, settings.hourlyHours).forEach((hour, i) => {
    const h = rowAt(hourly, HOURLY, i);
    snapshots.push(
      snapshot(settings, 'hourly', hour, hour + 3600, h.weather_code, {
        temperatureC: h.temperature_2m,
        feelsLikeC: h.apparent_temperature,
        precipitationProbability: h.precipitation_probability,
        precipitationMm: h.precipitation,
        humidity: h.relative_humidity_2m,
        windSpeedKph: h.wind_speed_10m,
        windDirectionDeg: h.wind_direction_10m,
        uvIndex: h.uv_index,
      }),
    );
  });
  const daily = forecast.daily;
  daily?.time.slice(0, settings.dailyDays).forEach((day, i) => {
    const d = rowAt(daily, DAILY, i);
    // A local day is not always 24 hours long (DST): it ends at the next local midnight.
    const end = DateTime.fromSeconds(day, { zone: timezone }).plus({ days: 1 }).toSeconds();
    snapshots.push(
      snapshot(settings, 'daily', day, end, d.weather_code, {
        temperatureMinC: d.temperature_2m_min,
        temperatureMaxC: d.temperature_2m_max,
        precipitationMm: d.precipitation_sum,
        precipitationProbability: d.precipitation_probability_max,
        windSpeedKph: d.wind_speed_10m_max,
        windDirectionDeg: d.wind_direction_10m_dominant,
        uvIndex: d.uv_index_max,
      }),
    );
  });
  return { observedAt: iso(time), snapshots: snapshots.filter((s): s is WeatherSnapshotInput => s !== null) };
}
