import { expect } from 'chai';
import { sharedServer, type TestServer } from '../../support/server.ts';
import { admin, request } from '../../support/http.ts';
import { createStation, createToken } from '../../support/factories.ts';

// docs/audience.md#filing-the-soundexchange-report-of-use,
// docs/audience.md#pointing-waveline-at-your-listener-counts: the station setting `royalties: {serviceName,
// transmissionCategory (A–M)}` and each stream entry's `stats: {kind: icecast, url, mount} | {kind:
// shoutcast, url}`, registered through the station core's feature settings registry (docs/architecture.md, "A
// feature's station setting").

describe('audience: station settings', () => {
  let server: TestServer;
  before(async () => {
    server = await sharedServer();
  });

  it('royalties: null by default, PATCH merges, A–M only, shown in the admin view', async () => {
    const station = await createStation(server.url);
    expect(station.royalties).to.deep.equal({ serviceName: null, transmissionCategory: null });
    const first = await admin(server.url, 'PATCH', `/stations/${station.id}`, { royalties: { serviceName: 'KWAV Online' } });
    expect(first.status, first.text).to.equal(200);
    const second = await admin(server.url, 'PATCH', `/stations/${station.id}`, { royalties: { transmissionCategory: 'C' } });
    expect(second.body.royalties).to.deep.equal({ serviceName: 'KWAV Online', transmissionCategory: 'C' });
    const bad = await admin(server.url, 'PATCH', `/stations/${station.id}`, { royalties: { transmissionCategory: 'N' } });
    expect(bad.status).to.equal(400);
    expect(bad.text).to.include('royalties');
  });

  it('stats on a stream entry: stored and shown; null by default; a bad kind, a missing mount, a non-http URL or one with credentials → 400 naming the field', async () => {
    const stats = { kind: 'icecast', url: 'http://icecast.example.org:8000/status-json.xsl', mount: '/live.mp3' };
    const station = await createStation(server.url, {
      profile: {
        streamUrls: [
          { url: 'https://s.example.org/live.mp3', key: 'mp3', stats },
          { url: 'https://s.example.org/hls.m3u8', key: 'hls' },
        ],
      },
    });
    const view = await admin(server.url, 'GET', `/stations/${station.id}`);
    expect(view.body.profile.streamUrls.map((s: { stats: unknown }) => s.stats)).to.deep.equal([stats, null]);
    const shoutcast = { kind: 'shoutcast', url: 'http://sc.example.org:8000/stats?sid=1&json=1' };
    const ok = await admin(server.url, 'PATCH', `/stations/${station.id}`, {
      profile: { streamUrls: [{ url: 'https://s.example.org/a', key: 'a', stats: shoutcast }] },
    });
    expect(ok.status, ok.text).to.equal(200);
    expect(ok.body.profile.streamUrls[0].stats).to.deep.equal(shoutcast);
    for (const [bad, field] of [
      [{ kind: 'wowza', url: 'http://x.example.org/' }, 'stats'],
      [{ kind: 'icecast', url: 'http://x.example.org/status-json.xsl' }, 'stats'],
      [{ kind: 'shoutcast', url: 'ftp://x.example.org/stats' }, 'stats.url'],
      [{ kind: 'shoutcast', url: 'http://admin:secret@x.example.org/stats?sid=1&json=1' }, 'stats.url'],
      [{ kind: 'shoutcast', url: 'http://x.example.org/admin.cgi?sid=1&pass=secret' }, 'stats.url'],
    ] as const) {
      const res = await admin(server.url, 'PATCH', `/stations/${station.id}`, {
        profile: { streamUrls: [{ url: 'https://s.example.org/a', key: 'a', stats: bad }] },
      });
      expect(res.status, JSON.stringify(bad)).to.equal(400);
      expect(res.text, JSON.stringify(bad)).to.include(`streamUrls`).and.include(field);
    }
  });

  it('the report of use through the route: 200 text/plain, the file name, the unknown-performances header', async () => {
    const station = await createStation(server.url, {
      timezone: 'America/Chicago',
      royalties: { serviceName: 'KWAV Online', transmissionCategory: 'B' },
    });
    const res = await admin(server.url, 'GET', `/stations/${station.id}/plays/report.txt?month=2026-02&format=soundexchange`);
    expect(res.status, res.text).to.equal(200);
    expect(res.headers.get('content-type')).to.match(/^text\/plain/);
    expect(res.headers.get('content-disposition')).to.equal('attachment; filename="KWAVOnline20260201_20260228_B.txt"');
    expect(res.headers.get('x-waveline-unknown-performances')).to.equal('0');
    expect(res.text).to.equal(
      'NAME_OF_SERVICE\tTRANSMISSION_CATEGORY\tFEATURED_ARTIST\tSOUND_RECORDING_TITLE\tISRC\tALBUM_TITLE\tMARKETING_LABEL\tACTUAL_TOTAL_PERFORMANCES\r\n',
    );
    const half = await createStation(server.url, { royalties: { serviceName: 'X' } });
    const conflict = await admin(server.url, 'GET', `/stations/${half.id}/plays/report.txt?month=2026-02&format=soundexchange`);
    expect(conflict.status).to.equal(409);
    expect(conflict.body.error.message).to.include('royalties.transmissionCategory').and.not.include('royalties.serviceName');
    const { token } = await createToken(server.url, station.id, ['listener:read']);
    const listener = await request(
      server.url,
      'GET',
      `/admin/v1/stations/${station.id}/plays/report.txt?month=2026-02&format=soundexchange`,
      { token },
    );
    expect(listener.status).to.equal(401);
  });
});
