import { expect } from 'chai';
import { strongEtag } from '../../../src/http/etag.ts';
import { useClockedServer } from '../../support/server.ts';
import { admin, request } from '../../support/http.ts';
import { currentBerlin, dailyBerlin, feedFixture, issuesOf } from './helpers.ts';

// GET …/weather and PUT /admin/v1/stations/{id}/weather (docs/weather-traffic.md#listener-reads,
// docs/weather-traffic.md#admin-api-operator-token).

describe('weather …/weather', () => {
  const { clock, server } = useClockedServer('2026-11-21T12:10:00.000Z', { reset: true });

  it('delivers the stored snapshots with contractVersion, timezone and freshness; unknown numbers null, timestamps UTC', async () => {
    const { get, putOk } = await feedFixture(server, 'weather');
    const stored = await putOk({ observedAt: '2026-11-21T13:05:00+01:00', snapshots: [currentBerlin, dailyBerlin] });
    expect(stored.body).to.deep.equal({ observedAt: '2026-11-21T12:05:00.000Z', receivedAt: '2026-11-21T12:10:00.000Z', count: 2 });
    const res = await get();
    expect(res.status).to.equal(200);
    expect(res.headers.get('cache-control')).to.equal('no-store');
    expect(res.headers.get('access-control-allow-origin')).to.equal('*');
    expect(res.headers.get('etag')).to.equal(strongEtag(Buffer.from(res.text)));
    expect(res.body).to.deep.equal({
      contractVersion: 1,
      timezone: 'Europe/Vienna',
      freshness: {
        status: 'fresh',
        thresholdSeconds: 3600,
        ageSeconds: 300,
        observedAt: '2026-11-21T12:05:00.000Z',
        receivedAt: '2026-11-21T12:10:00.000Z',
      },
      snapshots: [
        {
          locationId: 'berlin-mitte',
          locationName: 'Berlin Mitte',
          kind: 'current',
          validFrom: '2026-11-21T11:00:00.000Z',
          validUntil: '2026-11-21T12:00:00.000Z',
          conditionCode: 'PartlyCloudy',
          temperatureC: 7.5,
          feelsLikeC: 5,
          temperatureMinC: null,
          temperatureMaxC: null,
          precipitationProbability: 20,
          precipitationMm: 0,
          windSpeedKph: 14.4,
          windDirectionDeg: 250,
          humidity: 81,
          uvIndex: 1,
        },
        {
          locationId: 'berlin-mitte',
          locationName: 'Berlin Mitte',
          kind: 'daily',
          validFrom: '2026-11-21T23:00:00.000Z',
          validUntil: '2026-11-22T23:00:00.000Z',
          conditionCode: 'Rain',
          temperatureC: null,
          feelsLikeC: null,
          temperatureMinC: 2,
          temperatureMaxC: 9,
          precipitationProbability: 80,
          precipitationMm: 6.2,
          windSpeedKph: null,
          windDirectionDeg: null,
          humidity: null,
          uvIndex: null,
        },
      ],
    });
  });

  it('before anything was stored: freshness empty with every other freshness value null, and snapshots []', async () => {
    const { get } = await feedFixture(server, 'weather');
    const res = await get();
    expect(res.status).to.equal(200);
    expect(res.body).to.deep.equal({
      contractVersion: 1,
      timezone: 'Europe/Vienna',
      freshness: { status: 'empty', thresholdSeconds: null, ageSeconds: null, observedAt: null, receivedAt: null },
      snapshots: [],
    });
  });

  it('fresh while ageSeconds (whole seconds since observedAt) <= 3600, stale after', async () => {
    const { get, putOk } = await feedFixture(server, 'weather');
    await putOk({ observedAt: '2026-11-21T12:10:00.000Z', snapshots: [currentBerlin] });
    expect((await get()).body.freshness).to.include({ status: 'fresh', ageSeconds: 0 });
    clock.advance(3600_000 + 999);
    expect((await get()).body.freshness, 'fractions of a second are cut').to.include({
      status: 'fresh',
      ageSeconds: 3600,
      thresholdSeconds: 3600,
    });
    clock.advance(1);
    const stale = (await get()).body;
    expect(stale.freshness).to.deep.equal({
      status: 'stale',
      thresholdSeconds: 3600,
      ageSeconds: 3601,
      observedAt: '2026-11-21T12:10:00.000Z',
      receivedAt: '2026-11-21T12:10:00.000Z',
    });
    expect(stale.snapshots, 'stale data is still delivered').to.have.length(1);
    await putOk({ observedAt: clock.now().toISOString(), snapshots: [] });
    const refreshed = (await get()).body;
    expect(refreshed.freshness).to.include({ status: 'fresh', ageSeconds: 0 });
    expect(refreshed.snapshots, 'a PUT replaces every snapshot').to.deep.equal([]);
  });

  it('age counts from observedAt, not from receipt: an old observation stored now is stale at once; a PUT always replaces', async () => {
    const { get, putOk } = await feedFixture(server, 'weather');
    await putOk({ observedAt: '2026-11-21T12:09:00Z', snapshots: [currentBerlin] });
    await putOk({ observedAt: '2026-11-21T10:00:00Z', snapshots: [dailyBerlin] });
    const res = (await get()).body;
    expect(res.freshness).to.deep.equal({
      status: 'stale',
      thresholdSeconds: 3600,
      ageSeconds: 7800,
      observedAt: '2026-11-21T10:00:00.000Z',
      receivedAt: '2026-11-21T12:10:00.000Z',
    });
    expect(res.snapshots.map((s: { kind: string }) => s.kind)).to.deep.equal(['daily']);
  });

  it('304 with no body for a matching If-None-Match (after authentication); a new ETag when the age or the data changes', async () => {
    const { get, putOk } = await feedFixture(server, 'weather');
    await putOk({ observedAt: '2026-11-21T12:00:00Z', snapshots: [currentBerlin] });
    const first = await get();
    const etag = first.headers.get('etag')!;
    const again = await get({ 'if-none-match': etag });
    expect(again.status).to.equal(304);
    expect(again.text).to.equal('');
    expect((await get({ 'if-none-match': etag }, null)).status, 'a conditional GET authenticates first').to.equal(401);
    clock.advance(1000);
    const older = await get({ 'if-none-match': etag });
    expect(older.status).to.equal(200);
    expect(older.headers.get('etag')).not.to.equal(etag);
    const etag2 = older.headers.get('etag')!;
    await putOk({ observedAt: '2026-11-21T12:00:00Z', snapshots: [dailyBerlin] });
    expect((await get({ 'if-none-match': etag2 })).status, 'new data, same age').to.equal(200);
  });

  it('404 MODULE_DISABLED when the module is off; 404 NOT_FOUND without entitlement or redistribution permission; switches apply on the next read', async () => {
    const { get, putOk, settings } = await feedFixture(server, 'weather', {
      entitlements: { weather: true },
      redistribution: { weather: true },
    });
    await putOk({ observedAt: '2026-11-21T12:00:00Z', snapshots: [currentBerlin] });
    const off = await get();
    expect(off.status, 'weather is off by default').to.equal(404);
    expect(off.body.error.code).to.equal('MODULE_DISABLED');
    expect(off.headers.get('access-control-allow-origin')).to.equal('*');
    await settings({ modules: { weather: true }, entitlements: { weather: false } });
    const notEntitled = await get();
    expect(notEntitled.status).to.equal(404);
    expect(notEntitled.body.error.code).to.equal('NOT_FOUND');
    await settings({ entitlements: { weather: true }, redistribution: { weather: false } });
    const noPermission = await get();
    expect(noPermission.status).to.equal(404);
    expect(noPermission.body.error.code).to.equal('NOT_FOUND');
    await settings({ redistribution: { weather: true } });
    expect((await get()).status).to.equal(200);
    await settings({ modules: { traffic: false } });
    expect((await get()).status, 'the traffic switch does not touch weather').to.equal(200);
  });

  it('401 without a credential or with another scope; 404 for an unknown or offline station', async () => {
    const { station, get, path, otherCredential, settings } = await feedFixture(server, 'weather');
    expect((await get({}, null)).status).to.equal(401);
    const push = await get({}, await otherCredential(['push:register', 'ingest:write']));
    expect(push.status).to.equal(401);
    expect(push.body.error.code).to.equal('UNAUTHENTICATED');
    expect((await request(server.url, 'GET', path.replace(station.slug, 'no-such-station'))).status).to.equal(404);
    await settings({ publicOnline: false });
    expect((await get()).status).to.equal(404);
  });

  describe('PUT /admin/v1/stations/{stationId}/weather validates every field', () => {
    const cases: Array<[string, (s: Record<string, unknown>) => Record<string, unknown>, string]> = [
      [
        'a conditionCode outside the list, with the closest code',
        (s) => ({ ...s, conditionCode: 'Partly Cloudy' }),
        'snapshots.0.conditionCode invalid_value → PartlyCloudy',
      ],
      ['a conditionCode in the wrong case', (s) => ({ ...s, conditionCode: 'rain' }), 'snapshots.0.conditionCode invalid_value → Rain'],
      ['a missing conditionCode', ({ conditionCode: _, ...s }) => s, 'snapshots.0.conditionCode required'],
      ['an unknown kind', (s) => ({ ...s, kind: 'hour' }), 'snapshots.0.kind invalid_value → hourly'],
      ['a number sent as a string', (s) => ({ ...s, temperatureC: '7.5' }), 'snapshots.0.temperatureC invalid_type'],
      ['humidity above 100', (s) => ({ ...s, humidity: 120 }), 'snapshots.0.humidity too_big → 100'],
      ['a negative wind speed', (s) => ({ ...s, windSpeedKph: -1 }), 'snapshots.0.windSpeedKph too_small → 0'],
      [
        'a precipitation probability above 100',
        (s) => ({ ...s, precipitationProbability: 101 }),
        'snapshots.0.precipitationProbability too_big → 100',
      ],
      ['a wind direction above 360', (s) => ({ ...s, windDirectionDeg: 361 }), 'snapshots.0.windDirectionDeg too_big → 360'],
      ['a timestamp without a zone', (s) => ({ ...s, validFrom: '2026-11-21T12:00:00' }), 'snapshots.0.validFrom invalid_format'],
      ['a timestamp that is no date', (s) => ({ ...s, validUntil: '2026-02-30T12:00:00Z' }), 'snapshots.0.validUntil invalid_format'],
      ['validUntil before validFrom', (s) => ({ ...s, validUntil: '2026-11-21T10:00:00Z' }), 'snapshots.0.validUntil invalid_range'],
      [
        'temperatureMinC above temperatureMaxC',
        (s) => ({ ...s, temperatureMinC: 10, temperatureMaxC: 3 }),
        'snapshots.0.temperatureMinC invalid_range',
      ],
      [
        'an unknown field, with the closest field',
        (s) => ({ ...s, temperature: 7 }),
        'snapshots.0.temperature unknown_property → temperatureC',
      ],
      ['an empty location name', (s) => ({ ...s, locationName: '' }), 'snapshots.0.locationName too_small'],
    ];
    for (const [what, change, issue] of cases) {
      it(`400 for ${what}; the stored snapshots stay as they were`, async () => {
        const { get, put, putOk } = await feedFixture(server, 'weather');
        await putOk({ observedAt: '2026-11-21T12:00:00Z', snapshots: [dailyBerlin] });
        const before = (await get()).text;
        expect(issuesOf(await put({ observedAt: '2026-11-21T12:05:00Z', snapshots: [change({ ...currentBerlin })] }))).to.include(issue);
        expect((await get()).text).to.equal(before);
      });
    }

    it('400 for a missing or future observedAt (more than 300 s ahead), a missing snapshots array, or other top-level fields', async () => {
      const { put } = await feedFixture(server, 'weather');
      expect(issuesOf(await put({ snapshots: [] }))).to.include('observedAt required');
      expect(issuesOf(await put({ observedAt: '2026-11-21T12:16:00Z', snapshots: [] }))).to.include('observedAt in_future');
      expect((await put({ observedAt: '2026-11-21T12:15:00Z', snapshots: [] })).status, '300 s of clock skew are fine').to.equal(200);
      expect(issuesOf(await put({ observedAt: 1763726400000, snapshots: [] }))).to.include('observedAt invalid_type');
      expect(issuesOf(await put({ observedAt: '2026-11-21T12:00:00Z' }))).to.include('snapshots required');
      expect(issuesOf(await put({ observedAt: '2026-11-21T12:00:00Z', snapshots: {} }))).to.include('snapshots invalid_type');
      expect(issuesOf(await put({ observedAt: '2026-11-21T12:00:00Z', snapshots: [], snapshot: {} }))).to.include(
        'snapshot unknown_property → snapshots',
      );
    });

    it('404 for an unknown station, 401 without the operator token', async () => {
      expect(
        (await admin(server.url, 'PUT', '/stations/st_nope/weather', { observedAt: '2026-11-21T12:00:00Z', snapshots: [] })).status,
      ).to.equal(404);
      expect(
        (
          await request(server.url, 'PUT', '/admin/v1/stations/st_nope/weather', {
            json: { observedAt: '2026-11-21T12:00:00Z', snapshots: [] },
          })
        ).status,
      ).to.equal(401);
    });
  });
});
