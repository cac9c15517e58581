import { expect } from 'chai';
import { sharedServer, type TestServer } from '../support/server.ts';
import { admin, request } from '../support/http.ts';
import { putBroadcast, scheduleFixture } from '../domains/schedule/helpers.ts';
import { currentBerlin, feedFixture } from '../domains/weather/helpers.ts';
import { gql } from './helpers.ts';

const BROADCAST =
  'id title startsAt endsAt timezone localDate resolution status cancellationReason repeatOfId nature program { id title profileId image { url } } presenters { id title image { url } }';

describe('GraphQL: schedule, programs, current broadcast, weather and traffic', () => {
  let server: TestServer;
  before(async () => {
    server = await sharedServer();
  });

  it('schedule, programs and currentBroadcast equal the REST responses', async () => {
    const fx = await scheduleFixture(server.url);
    const now = Date.now();
    await putBroadcast(server.url, fx, new Date(now - 3600_000).toISOString(), new Date(now + 3600_000).toISOString());
    await putBroadcast(server.url, fx, new Date(now + 86400_000).toISOString(), new Date(now + 90000_000).toISOString());
    const q = `{ schedule { contractVersion timezone truncated broadcasts { ${BROADCAST} } }
                 programs { contractVersion timezone fromDate throughDate programs { id title description profileId image { url } presenters { id title image { url } } slots { weekday startTime durationMinutes } } }
                 currentBroadcast { contractVersion timezone broadcast { ${BROADCAST} } } }`;
    const res = await gql(server.url, fx.station.slug, fx.token, q);
    expect(res.body.errors, JSON.stringify(res.body.errors)).to.equal(undefined);
    const get = (path: string) => request(server.url, 'GET', `/api/v1/stations/${fx.station.slug}${path}`, { token: fx.token });
    expect(res.body.data.schedule).to.deep.equal((await get('/schedule')).body);
    expect(res.body.data.programs).to.deep.equal((await get('/programs')).body);
    const current = (await get('/broadcast/current')).body;
    expect(res.body.data.currentBroadcast.broadcast).to.deep.equal(current.broadcast);
    expect(res.body.data.currentBroadcast.broadcast.status).to.equal('live');
  });

  it('gives VALIDATION_ERROR (400) for a window over 31 days or throughDate before fromDate', async () => {
    const fx = await scheduleFixture(server.url);
    const long = await gql(
      server.url,
      fx.station.slug,
      fx.token,
      '{ schedule(fromDate: "2026-01-01", throughDate: "2026-03-01") { truncated } }',
    );
    expect(long.status).to.equal(400);
    expect(long.body.errors[0].extensions.code).to.equal('VALIDATION_ERROR');
    const backwards = await gql(
      server.url,
      fx.station.slug,
      fx.token,
      '{ programs(fromDate: "2026-01-10", throughDate: "2026-01-01") { fromDate } }',
    );
    expect(backwards.body.errors[0].extensions.code).to.equal('VALIDATION_ERROR');
    const malformed = await gql(server.url, fx.station.slug, fx.token, '{ schedule(fromDate: "tomorrow") { truncated } }');
    expect(malformed.body.errors[0].extensions.code).to.equal('VALIDATION_ERROR');
  });

  it('currentBroadcast is {asOf, broadcast: null} when nothing is on air; a disabled module is NOT_FOUND with a null resource', async () => {
    const fx = await scheduleFixture(server.url);
    const res = await gql(server.url, fx.station.slug, fx.token, '{ currentBroadcast { asOf broadcast { id } } }');
    expect(res.body.data.currentBroadcast.broadcast).to.equal(null);
    expect(res.body.data.currentBroadcast.asOf).to.be.a('string');
    await admin(server.url, 'PATCH', `/stations/${fx.station.id}`, { modules: { schedule: false } });
    const off = await gql(server.url, fx.station.slug, fx.token, '{ schedule { truncated } station { id } }');
    expect(off.body.data.schedule).to.equal(null);
    expect(off.body.errors[0].extensions.code).to.equal('NOT_FOUND');
  });

  it('weather and traffic are null without an error when not delivered, and match REST (without contractVersion) when delivered', async () => {
    const off = await scheduleFixture(server.url);
    const none = await gql(server.url, off.station.slug, off.token, '{ weather { timezone } traffic { timezone } }');
    expect(none.body).to.deep.equal({ data: { weather: null, traffic: null } });
    const fx = await feedFixture(server, 'weather');
    await fx.putOk({ observedAt: new Date().toISOString(), snapshots: [currentBerlin] });
    const res = await gql(
      server.url,
      fx.station.slug,
      fx.token,
      '{ weather { timezone freshness { status thresholdSeconds } snapshots } traffic { timezone } }',
    );
    expect(res.body.errors).to.equal(undefined);
    const rest = (await fx.get()).body;
    expect(res.body.data.weather.snapshots).to.deep.equal(rest.snapshots);
    expect(res.body.data.weather.freshness).to.deep.equal({ status: 'fresh', thresholdSeconds: 3600 });
    expect(res.body.data.traffic).to.equal(null);
  });
});
