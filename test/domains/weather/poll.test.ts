import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect } from 'chai';
import { pollFeed } from '../../../src/domains/weather/poll.ts';
import { useClockedServer } from '../../support/server.ts';
import { admin } from '../../support/http.ts';
import { eventually } from '../../support/factories.ts';
import { feedFixture, issuesOf } from './helpers.ts';

// Provider polling in the worker: a BullMQ job scheduler per station and feed fetches Open-Meteo or
// TomTom (here local servers speaking their documented formats) and stores through the admin command.

const NOW = new Date('2026-11-21T12:10:00.000Z');
const unix = (iso: string) => Date.parse(iso) / 1000;

/** An Open-Meteo `/v1/forecast` answer with `timeformat=unixtime` for Europe/Berlin. */
function openMeteoForecast() {
  return {
    latitude: 52.52,
    longitude: 13.419998,
    generationtime_ms: 0.1,
    utc_offset_seconds: 3600,
    timezone: 'Europe/Berlin',
    timezone_abbreviation: 'GMT+1',
    elevation: 38,
    current_units: { time: 'unixtime', interval: 'seconds', temperature_2m: '°C' },
    current: {
      time: unix('2026-11-21T12:00:00Z'),
      interval: 900,
      weather_code: 2,
      temperature_2m: 6.4,
      apparent_temperature: 3.1,
      relative_humidity_2m: 84,
      precipitation: 0,
      wind_speed_10m: 13.7,
      wind_direction_10m: 243,
      uv_index: 0.9,
    },
    hourly: {
      time: [unix('2026-11-21T12:00:00Z'), unix('2026-11-21T13:00:00Z'), unix('2026-11-21T14:00:00Z')],
      weather_code: [61, 42, 3],
      temperature_2m: [6.4, 6.1, 5.8],
      apparent_temperature: [3.1, 2.9, 2.5],
      precipitation_probability: [70, null, 30],
      precipitation: [0.4, 0.1, 0],
      relative_humidity_2m: [84, 86, 88],
      wind_speed_10m: [13.7, 12.2, 10.1],
      wind_direction_10m: [243, 240, 238],
      uv_index: [0.9, 0.5, 0.1],
    },
    daily: {
      time: [unix('2026-11-20T23:00:00Z'), unix('2026-11-21T23:00:00Z')],
      weather_code: [95, 73],
      temperature_2m_max: [8.1, 3.2],
      temperature_2m_min: [2.3, -1.5],
      precipitation_sum: [4.2, 6],
      precipitation_probability_max: [80, 90],
      wind_speed_10m_max: [24.1, 30.5],
      wind_direction_10m_dominant: [240, 300],
      uv_index_max: [1.2, 0.8],
    },
  };
}

/** A TomTom Traffic Incident Details v5 answer. */
function tomTomIncidents() {
  return {
    incidents: [
      {
        type: 'Feature',
        geometry: {
          type: 'LineString',
          coordinates: [
            [13.2841, 52.5012],
            [13.2902, 52.5044],
          ],
        },
        properties: {
          id: '4c3d2f1e0',
          iconCategory: 1,
          magnitudeOfDelay: 3,
          events: [
            { description: 'Accident', code: 401 },
            { description: 'Two lanes closed', code: 736 },
          ],
          startTime: '2026-11-21T10:40:00Z',
          endTime: '2026-11-21T14:00:00Z',
          from: 'Dreieck Funkturm',
          to: 'Kurfürstendamm',
          length: 2480.5,
          delay: 900,
          roadNumbers: ['A100'],
        },
      },
      {
        type: 'Feature',
        geometry: { type: 'Point', coordinates: [13.4, 52.52] },
        properties: {
          id: 'rw-7',
          iconCategory: 9,
          magnitudeOfDelay: 4,
          events: [{ description: 'Roadworks' }],
          startTime: null,
          endTime: null,
          from: null,
          to: null,
          length: null,
          delay: null,
          roadNumbers: [],
        },
      },
    ],
  };
}

interface FakeProvider {
  url: string;
  requests: URL[];
  status: number;
  close(): Promise<void>;
}

async function fakeProvider(answer: () => unknown): Promise<FakeProvider> {
  const fake = { requests: [] as URL[], status: 200 } as FakeProvider;
  const server: Server = createServer((req: IncomingMessage, res) => {
    fake.requests.push(new URL(req.url ?? '/', 'http://fake'));
    res.writeHead(fake.status, { 'content-type': 'application/json' });
    res.end(JSON.stringify(fake.status === 200 ? answer() : { reason: 'overloaded' }));
  });
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  fake.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  fake.close = () => new Promise<void>((ok) => server.close(() => ok()));
  return fake;
}

describe('weather and traffic provider polling (worker)', function () {
  this.timeout(30_000);
  const { server } = useClockedServer(NOW, { workers: true });
  let openMeteo: FakeProvider;
  let tomtom: FakeProvider;
  before(async () => {
    openMeteo = await fakeProvider(openMeteoForecast);
    tomtom = await fakeProvider(tomTomIncidents);
  });
  after(async () => {
    await openMeteo.close();
    await tomtom.close();
  });
  beforeEach(() => {
    openMeteo.status = 200;
    tomtom.status = 200;
  });

  it('Open-Meteo: the first poll runs at once and stores normalised snapshots; deleting the source removes the schedule', async () => {
    const f = await feedFixture(server, 'weather', {
      timezone: 'Europe/Berlin',
      modules: { weather: true },
      entitlements: { weather: true },
      redistribution: { weather: true },
    });
    const saved = await admin(server.url, 'PUT', `/stations/${f.station.id}/weather/source`, {
      provider: 'open-meteo',
      latitude: 52.52,
      longitude: 13.41,
      locationId: 'berlin',
      locationName: 'Berlin',
      hourlyHours: 3,
      dailyDays: 2,
      baseUrl: openMeteo.url,
    });
    expect(saved.status, JSON.stringify(saved.body)).to.equal(200);
    expect(saved.body).to.include({ feed: 'weather', provider: 'open-meteo', intervalSeconds: 900 });
    const weather = await eventually(async () => {
      const res = await f.get();
      return res.body.snapshots.length > 0 && res.body;
    });
    const asked = openMeteo.requests.find((u) => u.searchParams.get('latitude') === '52.52')!;
    expect(asked.pathname).to.equal('/v1/forecast');
    expect(Object.fromEntries(asked.searchParams)).to.include({
      longitude: '13.41',
      timeformat: 'unixtime',
      timezone: 'Europe/Berlin',
      wind_speed_unit: 'kmh',
      forecast_hours: '3',
      forecast_days: '2',
    });
    expect(asked.searchParams.get('current')!.split(',')).to.include('weather_code');
    expect(weather.freshness).to.include({
      status: 'fresh',
      ageSeconds: 600,
      observedAt: '2026-11-21T12:00:00.000Z',
      receivedAt: NOW.toISOString(),
    });
    const byKind = (kind: string) => weather.snapshots.filter((s: { kind: string }) => s.kind === kind);
    expect(byKind('current')).to.deep.equal([
      {
        locationId: 'berlin',
        locationName: 'Berlin',
        kind: 'current',
        validFrom: '2026-11-21T12:00:00.000Z',
        validUntil: '2026-11-21T12:15:00.000Z',
        conditionCode: 'PartlyCloudy',
        temperatureC: 6.4,
        feelsLikeC: 3.1,
        temperatureMinC: null,
        temperatureMaxC: null,
        precipitationProbability: null,
        precipitationMm: 0,
        windSpeedKph: 13.7,
        windDirectionDeg: 243,
        humidity: 84,
        uvIndex: 0.9,
      },
    ]);
    expect(
      byKind('hourly').map((s: { conditionCode: string; validFrom: string }) => [s.validFrom, s.conditionCode]),
      'WMO 42 is no WMO weather code: left out',
    ).to.deep.equal([
      ['2026-11-21T12:00:00.000Z', 'Rain'],
      ['2026-11-21T14:00:00.000Z', 'Cloudy'],
    ]);
    expect(
      byKind('daily').map((s: Record<string, unknown>) => [
        s.validFrom,
        s.validUntil,
        s.conditionCode,
        s.temperatureMinC,
        s.temperatureMaxC,
      ]),
    ).to.deep.equal([
      ['2026-11-20T23:00:00.000Z', '2026-11-21T23:00:00.000Z', 'Thunderstorm', 2.3, 8.1],
      ['2026-11-21T23:00:00.000Z', '2026-11-22T23:00:00.000Z', 'Snow', -1.5, 3.2],
    ]);
    // The poll records itself after storing the snapshots: wait for that write too.
    const source = await eventually(async () => {
      const res = await admin(server.url, 'GET', `/stations/${f.station.id}/weather/source`);
      return res.body.lastPolledAt !== null && res.body;
    });
    expect(source).to.include({ lastPolledAt: NOW.toISOString(), lastError: null });
    const schedulers = async () => (await server.svc.jobs.queue('default').getJobSchedulers()).map((s) => s.key);
    expect(await schedulers()).to.include(`feeds.poll:${f.station.id}:weather`);
    expect((await admin(server.url, 'DELETE', `/stations/${f.station.id}/weather/source`)).status).to.equal(204);
    expect(await schedulers()).not.to.include(`feeds.poll:${f.station.id}:weather`);
    expect((await admin(server.url, 'GET', `/stations/${f.station.id}/weather/source`)).status).to.equal(404);
    expect((await f.get()).body.snapshots, 'stored data stays').to.have.length(5);
  });

  it('TomTom: incidents mapped to the traffic snapshot; the API key goes to TomTom only and is never shown', async () => {
    const f = await feedFixture(server, 'traffic');
    const apiKey = 'tomtomSecretKey123';
    const saved = await admin(server.url, 'PUT', `/stations/${f.station.id}/traffic/source`, {
      provider: 'tomtom',
      apiKey,
      bbox: { minLat: 52.3, minLon: 13.0, maxLat: 52.7, maxLon: 13.8 },
      area: 'Berlin',
      baseUrl: tomtom.url,
    });
    expect(saved.status, JSON.stringify(saved.body)).to.equal(200);
    expect(saved.text).not.to.include(apiKey);
    const traffic = await eventually(async () => {
      const res = await f.get();
      return res.body.snapshot !== null && res.body;
    });
    const asked = tomtom.requests.find((u) => u.searchParams.get('key') === apiKey)!;
    expect(asked.pathname).to.equal('/traffic/services/5/incidentDetails');
    expect(asked.searchParams.get('bbox')).to.equal('13,52.3,13.8,52.7');
    expect(asked.searchParams.get('fields')).to.include('magnitudeOfDelay').and.include('roadNumbers');
    expect(traffic.freshness).to.include({ status: 'fresh', ageSeconds: 0, thresholdSeconds: 900 });
    expect(traffic.snapshot).to.deep.equal({
      observedAt: NOW.toISOString(),
      area: 'Berlin',
      incidents: [
        {
          id: '4c3d2f1e0',
          type: 'accident',
          severity: 'major',
          road: 'A100',
          direction: null,
          description: 'Accident; Two lanes closed',
          from: 'Dreieck Funkturm',
          to: 'Kurfürstendamm',
          delaySeconds: 900,
          lengthMeters: 2480.5,
          startsAt: '2026-11-21T10:40:00.000Z',
          endsAt: '2026-11-21T14:00:00.000Z',
          location: { lat: 52.5012, lon: 13.2841 },
        },
        {
          id: 'rw-7',
          type: 'roadworks',
          severity: 'unknown',
          road: null,
          direction: null,
          description: 'Roadworks',
          from: null,
          to: null,
          delaySeconds: null,
          lengthMeters: null,
          startsAt: null,
          endsAt: null,
          location: { lat: 52.52, lon: 13.4 },
        },
      ],
    });
    const source = await admin(server.url, 'GET', `/stations/${f.station.id}/traffic/source`);
    expect(source.body.settings).to.deep.include({
      area: 'Berlin',
      language: 'en-GB',
      bbox: { minLat: 52.3, minLon: 13.0, maxLat: 52.7, maxLon: 13.8 },
    });
    expect(source.text).not.to.include(apiKey);
    await admin(server.url, 'DELETE', `/stations/${f.station.id}/traffic/source`);
  });

  it('a failing provider leaves the stored snapshot alone and records the error (without the API key)', async () => {
    const f = await feedFixture(server, 'traffic');
    await f.putOk({ observedAt: '2026-11-21T12:00:00Z', snapshot: { area: 'Berlin', incidents: [] } });
    const before = (await f.get()).text;
    tomtom.status = 503;
    const apiKey = 'anotherSecretKey456';
    await admin(server.url, 'PUT', `/stations/${f.station.id}/traffic/source`, {
      provider: 'tomtom',
      apiKey,
      bbox: { minLat: 1, minLon: 1, maxLat: 2, maxLon: 2 },
      baseUrl: tomtom.url,
    });
    const source = await eventually(async () => {
      const res = await admin(server.url, 'GET', `/stations/${f.station.id}/traffic/source`);
      return res.body.lastError && res;
    });
    expect(source.body.lastError).to.equal('TomTom answered HTTP 503.');
    expect(source.text).not.to.include(apiKey);
    expect((await f.get()).text).to.equal(before);
    await admin(server.url, 'DELETE', `/stations/${f.station.id}/traffic/source`);
  });

  it('an answer in another format is refused before anything is stored', async () => {
    const f = await feedFixture(server, 'weather', {
      modules: { weather: true },
      entitlements: { weather: true },
      redistribution: { weather: true },
    });
    const broken = await fakeProvider(() => ({ current: { time: 'noon' } }));
    try {
      await server.svc.db('feed_sources').insert({
        station_id: f.station.id,
        feed: 'weather',
        provider: 'open-meteo',
        interval_seconds: 900,
        settings: JSON.stringify({
          latitude: 1,
          longitude: 1,
          locationId: 'x',
          locationName: 'X',
          hourlyHours: 0,
          dailyDays: 0,
          baseUrl: broken.url,
        }),
      });
      let error: unknown;
      await pollFeed(server.svc, f.station.id, 'weather').catch((err) => (error = err));
      expect((error as { code?: string }).code).to.equal('PROVIDER_UNAVAILABLE');
      expect((await f.get()).body.freshness.status).to.equal('empty');
      expect((await admin(server.url, 'GET', `/stations/${f.station.id}/weather/source`)).body.lastError).to.match(
        /^Open-Meteo answered in an unexpected format/,
      );
    } finally {
      await broken.close();
    }
  });

  it('no provider call for a station whose feed is switched off or not entitled', async () => {
    const f = await feedFixture(server, 'weather', { modules: { weather: false }, entitlements: { weather: true } });
    await server.svc.db('feed_sources').insert({
      station_id: f.station.id,
      feed: 'weather',
      provider: 'open-meteo',
      interval_seconds: 900,
      settings: JSON.stringify({
        latitude: 7,
        longitude: 7,
        locationId: 'x',
        locationName: 'X',
        hourlyHours: 0,
        dailyDays: 0,
        baseUrl: openMeteo.url,
      }),
    });
    expect(await pollFeed(server.svc, f.station.id, 'weather')).to.deep.equal({ skipped: 'not delivered' });
    expect(openMeteo.requests.some((u) => u.searchParams.get('latitude') === '7')).to.equal(false);
  });

  it('source bodies are validated: provider names with suggestions, bbox order, API key required', async () => {
    const f = await feedFixture(server, 'weather');
    const weather = (body: unknown) => admin(server.url, 'PUT', `/stations/${f.station.id}/weather/source`, body);
    const traffic = (body: unknown) => admin(server.url, 'PUT', `/stations/${f.station.id}/traffic/source`, body);
    expect(issuesOf(await weather({ provider: 'openmeteo', latitude: 1, longitude: 1, locationId: 'x', locationName: 'X' }))).to.include(
      'provider invalid_value → open-meteo',
    );
    expect(issuesOf(await weather({ provider: 'open-meteo', latitude: 91, longitude: 1, locationId: 'x', locationName: 'X' }))).to.include(
      'latitude too_big → 90',
    );
    expect(
      issuesOf(
        await weather({ provider: 'open-meteo', latitude: 1, longitude: 1, locationId: 'x', locationName: 'X', intervalSeconds: 10 }),
      ),
    ).to.include('intervalSeconds too_small → 60');
    expect(issuesOf(await traffic({ provider: 'tomtom', bbox: { minLat: 1, minLon: 1, maxLat: 2, maxLon: 2 } }))).to.include(
      'apiKey required',
    );
    expect(issuesOf(await traffic({ provider: 'tomtom', apiKey: 'k', bbox: { minLat: 2, minLon: 1, maxLat: 1, maxLon: 2 } }))).to.include(
      'bbox invalid_range',
    );
    expect(
      (
        await admin(server.url, 'PUT', '/stations/st_nope/weather/source', {
          provider: 'open-meteo',
          latitude: 1,
          longitude: 1,
          locationId: 'x',
          locationName: 'X',
        })
      ).status,
    ).to.equal(404);
  });
});
