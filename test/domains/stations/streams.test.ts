import { expect } from 'chai';
import { sharedServer, type TestServer } from '../../support/server.ts';
import { admin, request } from '../../support/http.ts';
import { createStation, listenerFixture } from '../../support/factories.ts';
import { up as backfillStreamKeys } from '../../../migrations/20261211023501_stream_keys_backfill.ts';

// docs/now-playing.md#heard-time-answers-in-the-listeners-time: `profile.streamUrls[]` entries gain `key` and
// `latencySeconds`.

const A = 'https://stream.example.org/a.mp3';
const B = 'https://stream.example.org/b.m3u8';
const C = 'https://stream.example.org/c.aac';

describe('stream keys and latencySeconds on profile.streamUrls', () => {
  let server: TestServer;
  before(async () => {
    server = await sharedServer();
  });

  it('stores the keys and latencies given, and shows them in the admin view and the station document', async () => {
    const streamUrls = [
      { label: 'MP3', url: A, key: 'mp3', latencySeconds: 6 },
      { url: B, key: 'hls', latencySeconds: 30 },
    ];
    const { station, token } = await listenerFixture(server.url, { profile: { streamUrls } });
    expect(station.profile).to.deep.include({
      streamUrls: [
        { label: 'MP3', url: A, mime: null, bitrateKbps: null, key: 'mp3', latencySeconds: 6, stats: null },
        { label: null, url: B, mime: null, bitrateKbps: null, key: 'hls', latencySeconds: 30, stats: null },
      ],
    });
    const doc = await request(server.url, 'GET', `/api/v1/stations/${station.slug}`, { token });
    expect(doc.body.profile.streamUrls.map((s: { key: string; latencySeconds: number }) => [s.key, s.latencySeconds])).to.deep.equal([
      ['mp3', 6],
      ['hls', 30],
    ]);
  });

  it('a written entry without key gets stream-{n} by its 1-based position and latencySeconds 0, stored in the profile JSON', async () => {
    const station = await createStation(server.url, { profile: { streamUrls: [{ url: A }, { url: B, key: 'hls' }, { url: C }] } });
    const stored = await server.svc.db('stations').where({ id: station.id }).first('profile');
    expect(stored.profile.streamUrls).to.deep.equal([
      { url: A, key: 'stream-1', latencySeconds: 0 },
      { url: B, key: 'hls', latencySeconds: 0 },
      { url: C, key: 'stream-3', latencySeconds: 0 },
    ]);
    // Adding an entry later keeps the keys already handed out (sent back as the admin view shows them).
    const current = (await admin(server.url, 'GET', `/stations/${station.id}`)).body.profile.streamUrls;
    const patched = await admin(server.url, 'PATCH', `/stations/${station.id}`, {
      profile: { streamUrls: [...current, { url: 'https://stream.example.org/new.opus', latencySeconds: 12 }] },
    });
    expect(patched.status, JSON.stringify(patched.body)).to.equal(200);
    expect(patched.body.profile.streamUrls.map((s: { key: string; latencySeconds: number }) => [s.key, s.latencySeconds])).to.deep.equal([
      ['stream-1', 0],
      ['hls', 0],
      ['stream-3', 0],
      ['stream-4', 12],
    ]);
  });

  it('a key used twice is 400 VALIDATION_ERROR naming the entry, also when a default key meets an explicit one', async () => {
    const station = await createStation(server.url);
    const twice = await admin(server.url, 'PATCH', `/stations/${station.id}`, {
      profile: {
        streamUrls: [
          { url: A, key: 'live' },
          { url: B, key: 'live' },
        ],
      },
    });
    expect(twice.status).to.equal(400);
    expect(twice.body.error.code).to.equal('VALIDATION_ERROR');
    expect(twice.body.error.issues).to.deep.include({
      path: 'profile.streamUrls.1.key',
      code: 'duplicate',
      message: 'profile.streamUrls.1.key "live" is already the key of profile.streamUrls.0; keys are unique within the station',
    });
    const defaulted = await admin(server.url, 'POST', '/stations', {
      slug: `dup-${Date.now().toString(36)}`,
      name: 'Dup FM',
      timezone: 'Europe/Berlin',
      profile: { streamUrls: [{ url: A }, { url: B, key: 'stream-1' }] },
    });
    expect(defaulted.status).to.equal(400);
    expect(defaulted.body.error.issues[0].path).to.equal('profile.streamUrls.1.key');
    // Nothing was stored by the refused PATCH.
    expect((await admin(server.url, 'GET', `/stations/${station.id}`)).body.profile.streamUrls).to.equal(null);
  });

  it('a latency out of 0–600 or not an integer, or a key off the pattern, is 400 naming the field', async () => {
    const station = await createStation(server.url);
    for (const [entry, path] of [
      [{ url: A, latencySeconds: 601 }, 'profile.streamUrls.0.latencySeconds'],
      [{ url: A, latencySeconds: -1 }, 'profile.streamUrls.0.latencySeconds'],
      [{ url: A, latencySeconds: 1.5 }, 'profile.streamUrls.0.latencySeconds'],
      [{ url: A, key: 'MP3' }, 'profile.streamUrls.0.key'],
      [{ url: A, key: '-mp3' }, 'profile.streamUrls.0.key'],
      [{ url: A, key: 'a'.repeat(33) }, 'profile.streamUrls.0.key'],
    ] as const) {
      const res = await admin(server.url, 'PATCH', `/stations/${station.id}`, { profile: { streamUrls: [entry] } });
      expect(res.status, JSON.stringify(entry)).to.equal(400);
      expect(res.body.error.code).to.equal('VALIDATION_ERROR');
      expect(res.body.error.issues.map((i: { path: string }) => i.path)).to.include(path);
    }
    const edge = await admin(server.url, 'PATCH', `/stations/${station.id}`, {
      profile: {
        streamUrls: [
          { url: A, key: '0', latencySeconds: 600 },
          { url: B, key: `a${'-'.repeat(31)}`, latencySeconds: 0 },
        ],
      },
    });
    expect(edge.status, JSON.stringify(edge.body)).to.equal(200);
  });

  it('the data backfill gives stored entries without a key stream-{n} by position and latencySeconds 0, keeping what they have', async () => {
    const station = await createStation(server.url);
    const untouched = await createStation(server.url, { profile: { tagline: 'no streams' } });
    // As stored before keys existed.
    await server.svc.db.raw(`UPDATE stations SET profile = ?::jsonb WHERE id = ?`, [
      JSON.stringify({ tagline: 'x', streamUrls: [{ url: A, label: 'MP3' }, { url: B, key: 'hls', latencySeconds: 30 }, { url: C }] }),
      station.id,
    ]);
    await backfillStreamKeys(server.svc.db);
    const stored = await server.svc.db('stations').where({ id: station.id }).first('profile');
    expect(stored.profile).to.deep.equal({
      tagline: 'x',
      streamUrls: [
        { url: A, label: 'MP3', key: 'stream-1', latencySeconds: 0 },
        { url: B, key: 'hls', latencySeconds: 30 },
        { url: C, key: 'stream-3', latencySeconds: 0 },
      ],
    });
    expect((await server.svc.db('stations').where({ id: untouched.id }).first('profile')).profile).to.deep.equal({ tagline: 'no streams' });
    await backfillStreamKeys(server.svc.db); // idempotent
    expect((await server.svc.db('stations').where({ id: station.id }).first('profile')).profile).to.deep.equal(stored.profile);
  });
});
