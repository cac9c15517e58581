import { expect } from 'chai';
import { useClockedServer } from '../../support/server.ts';
import { accident, feedFixture, issuesOf } from './helpers.ts';

// GET …/traffic and PUT /admin/v1/stations/{id}/traffic (docs/weather-traffic.md#listener-reads,
// docs/weather-traffic.md#admin-api-operator-token).

describe('traffic …/traffic', () => {
  const { clock, server } = useClockedServer('2026-11-21T12:10:00.000Z', { reset: true });

  it('delivers one snapshot {observedAt, area, incidents} with freshness; unknown values null, timestamps UTC', async () => {
    const { get, putOk } = await feedFixture(server, 'traffic');
    const stored = await putOk({
      observedAt: '2026-11-21T13:08:00+01:00',
      snapshot: { area: 'Berlin', incidents: [accident, { id: 'inc-2', type: 'roadworks', severity: 'unknown' }] },
    });
    expect(stored.body).to.deep.equal({ observedAt: '2026-11-21T12:08:00.000Z', receivedAt: '2026-11-21T12:10:00.000Z', count: 2 });
    const res = await get();
    expect(res.status).to.equal(200);
    expect(res.headers.get('cache-control')).to.equal('no-store');
    expect(res.body).to.deep.equal({
      contractVersion: 1,
      timezone: 'Europe/Vienna',
      freshness: {
        status: 'fresh',
        thresholdSeconds: 900,
        ageSeconds: 120,
        observedAt: '2026-11-21T12:08:00.000Z',
        receivedAt: '2026-11-21T12:10:00.000Z',
      },
      snapshot: {
        observedAt: '2026-11-21T12:08:00.000Z',
        area: 'Berlin',
        incidents: [
          { ...accident, startsAt: '2026-11-21T10:40:00.000Z', endsAt: '2026-11-21T13:00:00.000Z' },
          {
            id: 'inc-2',
            type: 'roadworks',
            severity: 'unknown',
            road: null,
            direction: null,
            description: null,
            from: null,
            to: null,
            delaySeconds: null,
            lengthMeters: null,
            startsAt: null,
            endsAt: null,
            location: null,
          },
        ],
      },
    });
  });

  it('before anything was stored: freshness empty with every other freshness value null, and snapshot null', async () => {
    const { get } = await feedFixture(server, 'traffic');
    expect((await get()).body).to.deep.equal({
      contractVersion: 1,
      timezone: 'Europe/Vienna',
      freshness: { status: 'empty', thresholdSeconds: null, ageSeconds: null, observedAt: null, receivedAt: null },
      snapshot: null,
    });
  });

  it('an empty incidents array with fresh freshness means no incidents; fresh through 900 s, stale from 901 s', async () => {
    const { get, putOk } = await feedFixture(server, 'traffic');
    await putOk({ observedAt: '2026-11-21T12:10:00Z', snapshot: { area: null, incidents: [] } });
    const now = (await get()).body;
    expect(now.snapshot).to.deep.equal({ observedAt: '2026-11-21T12:10:00.000Z', area: null, incidents: [] });
    expect(now.freshness.status).to.equal('fresh');
    clock.advance(900_000);
    expect((await get()).body.freshness).to.include({ status: 'fresh', ageSeconds: 900, thresholdSeconds: 900 });
    clock.advance(1000);
    expect((await get()).body.freshness).to.include({ status: 'stale', ageSeconds: 901 });
  });

  it('snapshot.observedAt may repeat observedAt (same instant in any zone); a different instant is 400', async () => {
    const { put, putOk } = await feedFixture(server, 'traffic');
    await putOk({ observedAt: '2026-11-21T12:00:00Z', snapshot: { observedAt: '2026-11-21T13:00:00+01:00', area: 'Wien', incidents: [] } });
    expect(
      issuesOf(await put({ observedAt: '2026-11-21T12:00:00Z', snapshot: { observedAt: '2026-11-21T12:01:00Z', incidents: [] } })),
    ).to.include('snapshot.observedAt mismatch');
  });

  it('304 for a matching If-None-Match while nothing changed; 200 with a new ETag when time moves on', async () => {
    const { get, putOk } = await feedFixture(server, 'traffic');
    await putOk({ observedAt: '2026-11-21T12:00:00Z', snapshot: { area: 'Berlin', incidents: [accident] } });
    const etag = (await get()).headers.get('etag')!;
    expect((await get({ 'if-none-match': etag })).status).to.equal(304);
    expect((await get({ 'if-none-match': `"x", ${etag}` })).status).to.equal(304);
    clock.advance(2000);
    expect((await get({ 'if-none-match': etag })).status).to.equal(200);
  });

  it('404 MODULE_DISABLED when the traffic module is off; NOT_FOUND when not entitled or without redistribution permission', async () => {
    const { get, settings } = await feedFixture(server, 'traffic', {
      modules: { weather: true },
      entitlements: { weather: true, traffic: true },
      redistribution: { weather: true, traffic: true },
    });
    const off = await get();
    expect(off.status).to.equal(404);
    expect(off.body.error.code).to.equal('MODULE_DISABLED');
    await settings({ modules: { traffic: true }, entitlements: { traffic: false } });
    expect((await get()).body.error.code).to.equal('NOT_FOUND');
    await settings({ entitlements: { traffic: true }, redistribution: { traffic: false } });
    expect((await get()).body.error.code).to.equal('NOT_FOUND');
    await settings({ redistribution: { traffic: true } });
    expect((await get()).status).to.equal(200);
    expect((await get({}, null)).status).to.equal(401);
  });

  describe('PUT /admin/v1/stations/{stationId}/traffic validates every field', () => {
    const cases: Array<[string, Record<string, unknown>, string]> = [
      ['an unknown incident type, with the closest type', { type: 'acident' }, 'snapshot.incidents.0.type invalid_value → accident'],
      ['an unknown severity, with the closest severity', { severity: 'mayor' }, 'snapshot.incidents.0.severity invalid_value → major'],
      ['a latitude above 90', { location: { lat: 91, lon: 13 } }, 'snapshot.incidents.0.location.lat too_big → 90'],
      ['a longitude below -180', { location: { lat: 52, lon: -181 } }, 'snapshot.incidents.0.location.lon too_small → -180'],
      ['a location without lon', { location: { lat: 52 } }, 'snapshot.incidents.0.location.lon required'],
      ['a location as a string', { location: '52.5,13.3' }, 'snapshot.incidents.0.location invalid_type'],
      ['a negative delay', { delaySeconds: -5 }, 'snapshot.incidents.0.delaySeconds too_small → 0'],
      ['a length sent as a string', { lengthMeters: '2.5 km' }, 'snapshot.incidents.0.lengthMeters invalid_type'],
      ['a timestamp without a zone', { startsAt: '2026-11-21 11:40' }, 'snapshot.incidents.0.startsAt invalid_format'],
      ['endsAt before startsAt', { endsAt: '2026-11-21T09:00:00Z' }, 'snapshot.incidents.0.endsAt invalid_range'],
      ['an unknown field, with the closest field', { roads: 'A100' }, 'snapshot.incidents.0.roads unknown_property → road'],
      ['a missing id', { id: undefined }, 'snapshot.incidents.0.id required'],
      ['a NUL character in a text', { description: 'a\u0000b' }, 'snapshot.incidents.0.description invalid_format'],
    ];
    for (const [what, change, issue] of cases) {
      it(`400 for ${what}; the stored snapshot stays as it was`, async () => {
        const { get, put, putOk } = await feedFixture(server, 'traffic');
        await putOk({ observedAt: '2026-11-21T12:00:00Z', snapshot: { area: 'Berlin', incidents: [] } });
        const before = (await get()).text;
        const incident = JSON.parse(JSON.stringify({ ...accident, ...change }));
        expect(issuesOf(await put({ observedAt: '2026-11-21T12:05:00Z', snapshot: { area: 'Berlin', incidents: [incident] } }))).to.include(
          issue,
        );
        expect((await get()).text).to.equal(before);
      });
    }

    it('400 for duplicate incident ids, a missing snapshot or incidents, a future observedAt, or Unix milliseconds', async () => {
      const { put } = await feedFixture(server, 'traffic');
      expect(issuesOf(await put({ observedAt: '2026-11-21T12:00:00Z', snapshot: { incidents: [accident, accident] } }))).to.include(
        'snapshot.incidents.1.id duplicate',
      );
      expect(issuesOf(await put({ observedAt: '2026-11-21T12:00:00Z' }))).to.include('snapshot required');
      expect(issuesOf(await put({ observedAt: '2026-11-21T12:00:00Z', snapshot: { area: 'Berlin' } }))).to.include(
        'snapshot.incidents required',
      );
      expect(issuesOf(await put({ observedAt: '2026-11-21T13:00:00Z', snapshot: { incidents: [] } }))).to.include('observedAt in_future');
      expect(issuesOf(await put({ observedAt: 1763726400000, snapshot: { incidents: [] } }))).to.include('observedAt invalid_type');
      expect(issuesOf(await put({ observedAt: '2026-11-21T12:00:00Z', snapshots: { incidents: [] } }))).to.include(
        'snapshots unknown_property → snapshot',
      );
    });
  });
});
