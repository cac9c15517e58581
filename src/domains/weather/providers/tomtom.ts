import { Type, Nullable, type Static } from '../../../http/schema.ts';
import type { IncidentInput, PutTrafficBody } from '../schemas.ts';
import type { TomTomSettings } from '../sources.ts';

// TomTom Traffic Incident Details API v5
// (https://developer.tomtom.com/traffic-api/documentation/traffic-incidents/incident-details):
// `GET /traffic/services/5/incidentDetails?key&bbox=minLon,minLat,maxLon,maxLat&fields=…` answers
// `{incidents: [GeoJSON Feature]}` whose `properties` carry iconCategory, magnitudeOfDelay, events…

const FIELDS =
  '{incidents{type,geometry{type,coordinates},properties{id,iconCategory,magnitudeOfDelay,events{description,code},startTime,endTime,from,to,length,delay,roadNumbers}}}';

/** iconCategory → incident type. */
const TYPES: Record<number, IncidentInput['type']> = {
  0: 'other',
  1: 'accident',
  2: 'weather',
  3: 'hazard',
  4: 'weather',
  5: 'weather',
  6: 'congestion',
  7: 'closure',
  8: 'closure',
  9: 'roadworks',
  10: 'weather',
  11: 'weather',
  14: 'hazard',
};
/** magnitudeOfDelay → severity (4 is TomTom's "undefined", used for closures). */
const SEVERITIES: Record<number, IncidentInput['severity']> = { 0: 'unknown', 1: 'minor', 2: 'moderate', 3: 'major', 4: 'unknown' };

const Text = Type.Optional(Nullable(Type.String()));
const Num = Type.Optional(Nullable(Type.Number()));

/** The part of the answer we read; anything else TomTom sends is ignored. */
export const TomTomIncidents = Type.Object({
  incidents: Type.Array(
    Type.Object({
      geometry: Type.Optional(Nullable(Type.Object({ type: Type.String(), coordinates: Type.Array(Type.Unknown()) }))),
      properties: Type.Object({
        id: Type.String({ minLength: 1 }),
        iconCategory: Num,
        magnitudeOfDelay: Num,
        events: Type.Optional(Nullable(Type.Array(Type.Object({ description: Text })))),
        startTime: Text,
        endTime: Text,
        from: Text,
        to: Text,
        length: Num,
        delay: Num,
        roadNumbers: Type.Optional(Nullable(Type.Array(Type.String()))),
      }),
    }),
  ),
});
export type TomTomIncidents = Static<typeof TomTomIncidents>;
type Feature = TomTomIncidents['incidents'][number];

export function tomTomUrl(settings: TomTomSettings): string {
  const { minLat, minLon, maxLat, maxLon } = settings.bbox;
  const url = new URL('/traffic/services/5/incidentDetails', settings.baseUrl);
  url.searchParams.set('key', settings.apiKey);
  url.searchParams.set('bbox', [minLon, minLat, maxLon, maxLat].join(','));
  url.searchParams.set('fields', FIELDS);
  url.searchParams.set('language', settings.language);
  url.searchParams.set('timeValidityFilter', 'present');
  return url.toString();
}

const text = (value: string | null | undefined, max: number): string | null => {
  const cleaned = value?.replace(/\u0000/g, '').trim();
  return cleaned ? cleaned.slice(0, max) : null;
};

const timestamp = (value: string | null | undefined): string | null => {
  const ms = value ? Date.parse(value) : Number.NaN;
  return Number.isNaN(ms) ? null : new Date(ms).toISOString();
};

const positive = (value: number | null | undefined, max: number): number | null =>
  value == null || value < 0 || value > max ? null : value;

/** The first point of a Point or LineString geometry ([lon, lat] in GeoJSON). */
function location(geometry: Feature['geometry']): IncidentInput['location'] {
  const first = geometry?.type === 'Point' ? geometry.coordinates : geometry?.type === 'LineString' ? geometry.coordinates[0] : null;
  if (!Array.isArray(first)) return null;
  const [lon, lat] = first as unknown[];
  if (typeof lat !== 'number' || typeof lon !== 'number' || Math.abs(lat) > 90 || Math.abs(lon) > 180) return null;
  return { lat, lon };
}

function incident(feature: Feature): IncidentInput {
  const p = feature.properties;
  const description = (p.events ?? [])
    .map((e) => e.description)
    .filter(Boolean)
    .join('; ');
  const startsAt = timestamp(p.startTime);
  let endsAt = timestamp(p.endTime);
  if (startsAt && endsAt && endsAt < startsAt) endsAt = null;
  return {
    id: p.id.slice(0, 200),
    type: TYPES[p.iconCategory ?? 0] ?? 'other',
    severity: SEVERITIES[p.magnitudeOfDelay ?? 0] ?? 'unknown',
    road: text(p.roadNumbers?.join(', '), 200),
    direction: null, // v5 has no direction field
    description: text(description, 2000),
    from: text(p.from, 200),
    to: text(p.to, 200),
    delaySeconds: positive(p.delay, 2_592_000),
    lengthMeters: positive(p.length, 10_000_000),
    startsAt,
    endsAt,
    location: location(feature.geometry),
  };
}

/** TomTom incidents as the body of `PUT …/traffic`, observed when they were fetched. */
export function tomTomToTraffic(answer: TomTomIncidents, settings: TomTomSettings, fetchedAt: Date): PutTrafficBody {
  const seen = new Set<string>();
  const incidents = answer.incidents.map(incident).filter((i) => !seen.has(i.id) && seen.add(i.id));
  return { observedAt: fetchedAt.toISOString(), snapshot: { area: settings.area, incidents } };
}
