import { expect } from 'chai';
import { sharedServer, type TestServer } from '../support/server.ts';
import { admin, request } from '../support/http.ts';
import { createStation, createToken, listenerFixture } from '../support/factories.ts';
import { realtimeResource } from '../../src/domains/stations/presenter.ts';

describe('station document GET /api/v1/stations/{slug}', () => {
  let server: TestServer;
  before(async () => {
    server = await sharedServer();
  });

  it('has contractVersion 1, id distinct from slug, profile with every value null when unset, and delivery.pollIntervalSeconds 30', async () => {
    const { station, token } = await listenerFixture(server.url);
    const res = await request(server.url, 'GET', `/api/v1/stations/${station.slug}`, { token });
    expect(res.status).to.equal(200);
    expect(res.body.contractVersion).to.equal(1);
    expect(res.body.id)
      .to.equal(station.id)
      .and.match(/^st_[a-z2-7]{20}$/);
    expect(res.body.slug).to.equal(station.slug);
    expect(res.body.name).to.equal('Test FM');
    expect(res.body.timezone).to.equal('Europe/Berlin');
    expect(res.body.profile).to.deep.equal({
      tagline: null,
      description: null,
      frequencyLabel: null,
      websiteUrls: null,
      streamUrls: null,
      contactEmail: null,
      phone: null,
      address: null,
      socialLinks: null,
    });
    expect(res.body.delivery).to.deep.equal({ pollIntervalSeconds: 30 });
  });

  it('realtime.sse is the Server-Sent Events URL of the same channel on the same gateway (wss → https); realtime is null when the module is off', () => {
    const station = { id: 'st_x', modules: { realtime: true } } as Parameters<typeof realtimeResource>[0];
    expect(realtimeResource(station, { realtimePublicUrl: 'wss://rt.example.org' })).to.deep.equal({
      url: 'wss://rt.example.org/v1/realtime?channels[]=stations.st_x.feed',
      channel: 'stations.st_x.feed',
      sse: 'https://rt.example.org/v1/realtime/sse?channels[]=stations.st_x.feed',
    });
    const off = { id: 'st_x', modules: { realtime: false } } as Parameters<typeof realtimeResource>[0];
    expect(realtimeResource(off, { realtimePublicUrl: 'wss://rt.example.org' })).to.equal(null);
  });

  it('links every resource by path, realtime as {url, channel, sse}; weather and traffic null until delivered', async () => {
    const { station, token } = await listenerFixture(server.url);
    const res = await request(server.url, 'GET', `/api/v1/stations/${station.slug}`, { token });
    const base = `/api/v1/stations/${station.slug}`;
    expect(res.body.resources).to.deep.equal({
      schemas: `${base}/schemas`,
      content: `${base}/content`,
      schedule: `${base}/schedule`,
      programs: `${base}/programs`,
      currentBroadcast: `${base}/broadcast/current`,
      nowPlaying: `${base}/now-playing`,
      trackHistory: `${base}/track-history`,
      weather: null,
      traffic: null,
      calendar: `${base}/schedule.ics`,
      graphql: `${base}/graphql`,
      media: `/api/media/public/${station.id}/`,
      podcast: null,
      realtime: {
        url: `ws://localhost:3001/v1/realtime?channels[]=${encodeURIComponent(`stations.${station.id}.feed`)}`,
        channel: `stations.${station.id}.feed`,
        sse: `http://localhost:3001/v1/realtime/sse?channels[]=${encodeURIComponent(`stations.${station.id}.feed`)}`,
      },
    });
  });

  it('a switched-off module links null, and weather needs module, entitlement and redistribution (applies on the next read)', async () => {
    const { station, token } = await listenerFixture(server.url);
    const path = `/api/v1/stations/${station.slug}`;
    let patch = await admin(server.url, 'PATCH', `/stations/${station.id}`, {
      modules: { content: false, realtime: false, weather: true },
      entitlements: { weather: true },
    });
    expect(patch.status).to.equal(200);
    let res = await request(server.url, 'GET', path, { token });
    expect(res.body.resources.content).to.equal(null);
    expect(res.body.resources.realtime).to.equal(null);
    expect(res.body.resources.schedule).to.be.a('string');
    expect(res.body.resources.weather, 'redistribution not recorded yet').to.equal(null);
    patch = await admin(server.url, 'PATCH', `/stations/${station.id}`, { redistribution: { weather: true } });
    expect(patch.body.modules.content, 'earlier module switches are kept').to.equal(false);
    res = await request(server.url, 'GET', path, { token });
    expect(res.body.resources.weather).to.equal(`${path}/weather`);
  });

  it('shows the profile the operator set', async () => {
    const profile = {
      tagline: 'The sound of the city',
      frequencyLabel: '101.5 FM',
      websiteUrls: ['https://example.org'],
      streamUrls: [{ label: 'MP3', url: 'https://stream.example.org/live.mp3', mime: 'audio/mpeg', bitrateKbps: 128 }],
      socialLinks: [{ network: 'mastodon', url: 'https://social.example/@fm' }],
    };
    const { station, token } = await listenerFixture(server.url, { profile });
    const res = await request(server.url, 'GET', `/api/v1/stations/${station.slug}`, { token });
    expect(res.body.profile).to.include({ tagline: 'The sound of the city', frequencyLabel: '101.5 FM', description: null, phone: null });
    // `stats`: the audience feature's stream entry field (docs/audience.md), null when not set.
    expect(res.body.profile.streamUrls).to.deep.equal([{ ...profile.streamUrls[0], key: 'stream-1', latencySeconds: 0, stats: null }]);
  });

  it('gives every stream URL entry all its keys, null when the operator left them out', async () => {
    const profile = {
      streamUrls: [{ url: 'https://stream.example.org/live.aac' }, { url: 'https://stream.example.org/hq.mp3', bitrateKbps: 320 }],
    };
    const { station, token } = await listenerFixture(server.url, { profile });
    const res = await request(server.url, 'GET', `/api/v1/stations/${station.slug}`, { token });
    expect(res.body.profile.streamUrls).to.deep.equal([
      {
        label: null,
        url: 'https://stream.example.org/live.aac',
        mime: null,
        bitrateKbps: null,
        key: 'stream-1',
        latencySeconds: 0,
        stats: null,
      },
      {
        label: null,
        url: 'https://stream.example.org/hq.mp3',
        mime: null,
        bitrateKbps: 320,
        key: 'stream-2',
        latencySeconds: 0,
        stats: null,
      },
    ]);
  });

  it('is 404 NOT_FOUND for an unknown, inactive or public-offline station, with CORS headers', async () => {
    const { station, token } = await listenerFixture(server.url);
    const unknown = await request(server.url, 'GET', '/api/v1/stations/no-such-station', { token });
    expect(unknown.status).to.equal(404);
    expect(unknown.body.error.code).to.equal('NOT_FOUND');
    expect(unknown.headers.get('access-control-allow-origin')).to.equal('*');
    await admin(server.url, 'PATCH', `/stations/${station.id}`, { publicOnline: false });
    const offline = await request(server.url, 'GET', `/api/v1/stations/${station.slug}`, { token });
    expect(offline.status).to.equal(404);
    await admin(server.url, 'PATCH', `/stations/${station.id}`, { publicOnline: true, active: false });
    const inactive = await request(server.url, 'GET', `/api/v1/stations/${station.slug}`, { token });
    expect(inactive.status).to.equal(404);
    await admin(server.url, 'PATCH', `/stations/${station.id}`, { active: true });
    expect((await request(server.url, 'GET', `/api/v1/stations/${station.slug}`, { token })).status).to.equal(200);
  });

  it('follows a slug change on the next read', async () => {
    const { station, token } = await listenerFixture(server.url);
    const newSlug = `${station.slug}-new`;
    expect((await admin(server.url, 'PATCH', `/stations/${station.id}`, { slug: newSlug })).status).to.equal(200);
    expect((await request(server.url, 'GET', `/api/v1/stations/${station.slug}`, { token })).status).to.equal(404);
    const res = await request(server.url, 'GET', `/api/v1/stations/${newSlug}`, { token });
    expect(res.status).to.equal(200);
    expect(res.body.resources.content).to.equal(`/api/v1/stations/${newSlug}/content`);
  });

  it('"writes are idempotent where the path names the id": the same PATCH twice answers the same station', async () => {
    const { station } = await listenerFixture(server.url);
    const body = {
      name: 'Twice FM',
      profile: { tagline: 'Again', websiteUrls: ['https://twice.example'] },
      modules: { weather: true },
      push: { provider: 'fcm' },
    };
    const first = await admin(server.url, 'PATCH', `/stations/${station.id}`, body);
    expect(first.status).to.equal(200);
    await new Promise((resolve) => setTimeout(resolve, 5)); // so a rewrite would show in updatedAt
    const again = await admin(server.url, 'PATCH', `/stations/${station.id}`, body);
    expect(again.body).to.deep.equal(first.body);
    const changed = await admin(server.url, 'PATCH', `/stations/${station.id}`, { profile: { tagline: 'New' } });
    expect(changed.body.profile).to.deep.include({ tagline: 'New', websiteUrls: ['https://twice.example'] });
    expect(changed.body.updatedAt).to.not.equal(first.body.updatedAt);
  });

  it('timezone is an "IANA timezone string": a UTC offset is 400 on create and patch', async () => {
    for (const timezone of ['+01:00', '-0530']) {
      const created = await admin(server.url, 'POST', '/stations', { slug: `offset-${Date.now()}`, name: 'x', timezone });
      expect(created.status, timezone).to.equal(400);
      expect(created.body.error.issues[0]).to.include({ path: 'timezone', code: 'invalid_value' });
    }
    const { station } = await listenerFixture(server.url);
    const patched = await admin(server.url, 'PATCH', `/stations/${station.id}`, { timezone: '+02:00' });
    expect(patched.status).to.equal(400);
    expect((await admin(server.url, 'PATCH', `/stations/${station.id}`, { timezone: 'Etc/GMT+5' })).status).to.equal(200);
  });

  it("PATCH takes any field of the POST, id included: the station's own id is accepted, another is 400", async () => {
    const { station } = await listenerFixture(server.url);
    const same = await admin(server.url, 'PATCH', `/stations/${station.id}`, { id: station.id, name: 'Own Id FM' });
    expect(same.status, JSON.stringify(same.body)).to.equal(200);
    expect(same.body).to.include({ id: station.id, name: 'Own Id FM' });
    expect(
      (await admin(server.url, 'PATCH', `/stations/${station.id}`, { id: station.id })).status,
      'only the id: nothing to change',
    ).to.equal(200);
    const other = await admin(server.url, 'PATCH', `/stations/${station.id}`, { id: 'st_someoneelse', name: 'Moved' });
    expect(other.status).to.equal(400);
    expect(other.body.error.issues[0]).to.include({ path: 'id', code: 'invalid_value' });
    expect((await admin(server.url, 'GET', `/stations/${station.id}`)).body.name, 'nothing stored').to.equal('Own Id FM');
  });

  it('a credential of station A on station B is 401, on an unknown slug 404 (gate order)', async () => {
    const a = await listenerFixture(server.url);
    const b = await createStation(server.url);
    expect((await request(server.url, 'GET', `/api/v1/stations/${b.slug}`, { token: a.token })).status).to.equal(401);
    expect((await request(server.url, 'GET', '/api/v1/stations/unknown-slug-xyz', { token: a.token })).status).to.equal(404);
  });

  it('another scope does not imply listener access', async () => {
    const station = await createStation(server.url);
    const { token } = await createToken(server.url, station.id, ['push:register', 'ingest:write']);
    const res = await request(server.url, 'GET', `/api/v1/stations/${station.slug}`, { token });
    expect(res.status).to.equal(401);
    expect(res.body.error.code).to.equal('UNAUTHENTICATED');
  });
});
