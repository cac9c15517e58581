import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { useClockedServer } from '../../support/server.ts';
import { admin, request } from '../../support/http.ts';
import { ingest, ingestFixture, until } from '../../support/ingest.ts';
import { ImageServer, jpeg, png } from '../../support/imageServer.ts';
import { uploaded } from '../media/helpers.ts';

// Operator pins and blocks, the logo rule and the fallbacks
// (docs/now-playing.md#how-an-operator-fixes-wrong-art-in-one-call): the operator's word wins at once, on
// reads and on past plays.

describe('artwork: pins, blocks and fallbacks', function () {
  this.timeout(30_000);
  const images = new ImageServer();
  const { server } = useClockedServer('2026-06-01T12:00:00Z', { workers: true, env: { WEBHOOKS_ALLOW_INSECURE: '1' } });
  before(() => images.start());
  after(() => images.stop());

  const station = () => ingestFixture(server.url, { rundownFollowing: false });
  const track = async (slug: string, token: string) =>
    (await request(server.url, 'GET', `/api/v1/stations/${slug}/now-playing`, { token })).body.track;
  const history = async (slug: string, token: string) =>
    (await request(server.url, 'GET', `/api/v1/stations/${slug}/track-history`, { token })).body.items;
  const resolved = (stationId: string) =>
    until(async () => {
      const open = await server.svc.db('observations').where({ station_id: stationId }).whereNull('artwork_view').first();
      return open ? null : true;
    });
  const path = (name: string) => `/${name}-${randomUUID().slice(0, 8)}`;

  it('a pin (uploaded version) shows at once on now-playing and on past plays; a title pin wins over the artist’s; removal restores the chain', async () => {
    const { station: st, ingestToken, listenerToken } = await station();
    await ingest(server.url, st, ingestToken, {
      artist: 'Daft Punk',
      title: 'Aerodynamic',
      observedAt: Date.parse('2026-06-01T11:50:00Z'),
    });
    await ingest(server.url, st, ingestToken, {
      artist: 'Daft Punk',
      title: 'One More Time',
      observedAt: Date.parse('2026-06-01T11:55:00Z'),
    });
    await resolved(st.id);
    const artistArt = await uploaded(server.url, st.id, await png(11, 700, 700), 'image/png');
    // NFKC (full-width letters), case folding, trimmed and collapsed spaces.
    const put = await admin(server.url, 'PUT', `/stations/${st.id}/artwork/pins/daft-punk`, {
      match: { artist: '  ＤＡＦＴ   punk ' },
      image: { versionId: artistArt.versionId },
    });
    expect(put.status, JSON.stringify(put.body)).to.equal(201);
    expect(put.body).to.include({ id: 'daft-punk', status: 'kept', reason: null });
    const now = await track(st.slug, listenerToken);
    expect(now.artwork.source).to.equal('operator');
    expect(now.artworkUrl).to.equal(now.artwork.variants['600']);
    const items = await history(st.slug, listenerToken);
    expect(items.map((i: { artwork: { source: string } }) => i.artwork.source)).to.deep.equal(['operator', 'operator']);

    const titleArt = await uploaded(server.url, st.id, await png(12, 700, 700), 'image/png');
    const titlePin = await admin(server.url, 'PUT', `/stations/${st.id}/artwork/pins/omt`, {
      match: { artist: 'Daft Punk', title: 'one more time' },
      image: { versionId: titleArt.versionId },
    });
    expect(titlePin.status).to.equal(201);
    const [latest, earlier] = await history(st.slug, listenerToken);
    expect(latest.artwork.url).to.not.equal(earlier.artwork.url);
    expect(earlier.artwork.url).to.equal(now.artwork.url);
    // A body with the pin’s read-only fields is refused; replacing answers 200.
    expect((await admin(server.url, 'PUT', `/stations/${st.id}/artwork/pins/omt`, titlePin.body)).status).to.equal(400);
    const again = await admin(server.url, 'PUT', `/stations/${st.id}/artwork/pins/omt`, {
      match: { artist: 'Daft Punk', title: 'One More Time' },
      image: null,
    });
    expect(again.status).to.equal(200);
    const hidden = await track(st.slug, listenerToken);
    expect(hidden).to.not.have.property('artworkUrl');
    expect(hidden.artwork).to.equal(null);
    expect((await admin(server.url, 'GET', `/stations/${st.id}/artwork/pins`)).body.pins.map((p: { id: string }) => p.id)).to.deep.equal([
      'daft-punk',
      'omt',
    ]);
    expect((await admin(server.url, 'DELETE', `/stations/${st.id}/artwork/pins/omt`)).status).to.equal(204);
    expect((await track(st.slug, listenerToken)).artwork.source).to.equal('operator');
    expect((await admin(server.url, 'DELETE', `/stations/${st.id}/artwork/pins/daft-punk`)).status).to.equal(204);
    expect((await track(st.slug, listenerToken)).artwork).to.equal(null);
    expect((await admin(server.url, 'GET', `/stations/${st.id}/artwork/pins/daft-punk`)).status).to.equal(404);
  });

  it('refuses a pin naming another station’s image version or a malformed URL (400 naming the field)', async () => {
    const { station: st } = await station();
    const { station: other } = await station();
    const foreign = await uploaded(server.url, other.id, await png(13, 600, 600), 'image/png');
    const a = await admin(server.url, 'PUT', `/stations/${st.id}/artwork/pins/x`, {
      match: { artist: 'X' },
      image: { versionId: foreign.versionId },
    });
    expect(a.status).to.equal(400);
    expect(a.body.error.details?.[0]?.path ?? JSON.stringify(a.body)).to.include('image.versionId');
    const b = await admin(server.url, 'PUT', `/stations/${st.id}/artwork/pins/x`, { match: { artist: 'X' }, image: { url: 'not a url' } });
    expect(b.status).to.equal(400);
    expect(JSON.stringify(b.body)).to.include('image.url');
  });

  it('a pinned URL whose image fails a check shows `rejected` with its reason, and its tracks use the next source', async () => {
    const { station: st, ingestToken, listenerToken } = await station();
    const cover = images.serve(path('ok'), await png(14, 640, 640));
    await ingest(server.url, st, ingestToken, { artist: 'Moby', title: 'Porcelain', artworkUrl: cover });
    await until(async () => (await track(st.slug, listenerToken))?.artwork);
    const small = images.serve(path('small'), await png(15, 90, 90));
    const put = await admin(server.url, 'PUT', `/stations/${st.id}/artwork/pins/moby`, {
      match: { artist: 'Moby' },
      image: { url: small },
    });
    expect(put.status).to.equal(201);
    expect(put.body.status).to.equal('pending');
    const pin = await until(async () => {
      const got = await admin(server.url, 'GET', `/stations/${st.id}/artwork/pins/moby`);
      return got.body.status === 'pending' ? null : got.body;
    });
    expect(pin).to.include({ status: 'rejected', reason: 'too-small' });
    expect((await track(st.slug, listenerToken)).artwork.source).to.equal('ingest');
  });

  it('a block stops a kept image at once; the station logo re-encoded is blocked as track art and shows as the station fallback', async () => {
    const { station: st, ingestToken, listenerToken } = await station();
    const cover = images.serve(path('cover'), await png(16, 640, 640));
    await ingest(server.url, st, ingestToken, { artist: 'Röyksopp', title: 'Eple', artworkUrl: cover });
    await until(async () => (await track(st.slug, listenerToken))?.artwork);
    const block = await admin(server.url, 'POST', `/stations/${st.id}/artwork/blocks`, { url: cover });
    expect(block.status, JSON.stringify(block.body)).to.equal(201);
    expect(block.body.hash).to.match(/^[0-9a-f]{16}$/);
    const now = await track(st.slug, listenerToken);
    expect(now.artwork).to.equal(null);
    expect(now).to.not.have.property('artworkUrl');
    expect((await admin(server.url, 'GET', `/stations/${st.id}/artwork/blocks`)).body.blocks).to.have.length(1);
    expect((await admin(server.url, 'DELETE', `/stations/${st.id}/artwork/blocks/${block.body.id}`)).status).to.equal(204);

    // The logo: an upload named by the station's artwork setting.
    const logo = await uploaded(server.url, st.id, await png(17, 800, 800), 'image/png');
    const patched = await admin(server.url, 'PATCH', `/stations/${st.id}`, { artwork: { stationImageVersionId: logo.versionId } });
    expect(patched.status, JSON.stringify(patched.body)).to.equal(200);
    expect(patched.body.artwork).to.deep.equal({ minSize: 300, fallback: true, stationImageVersionId: logo.versionId });
    const reencoded = images.serve(path('logo'), await jpeg(17, 500, 500, 60), 'image/jpeg');
    await ingest(server.url, st, ingestToken, { artist: 'Station', title: 'Jingle', artworkUrl: reencoded });
    const shown = await until(async () => {
      const t = await track(st.slug, listenerToken);
      return t?.title === 'Jingle' && t.artwork ? t : null;
    });
    const check = await server.svc.db('artwork_checks').where({ station_id: st.id, url: reencoded }).first();
    expect(check).to.include({ status: 'rejected', reason: 'blocked' });
    // A fallback is never an artworkUrl: it appears only in `artwork`.
    expect(shown.artwork.source).to.equal('station');
    expect(shown).to.not.have.property('artworkUrl');
    const variant = await fetch(shown.artwork.variants['300'].replace(server.svc.config.publicBaseUrl, server.url));
    expect(variant.status).to.equal(200);
  });

  it('the station setting `artwork` validates naming the field: minSize 100–1400, an image version of the station', async () => {
    const { station: st } = await station();
    const { station: other } = await station();
    const foreign = await uploaded(server.url, other.id, await png(18, 600, 600), 'image/png');
    for (const [artwork, field] of [
      [{ minSize: 99 }, 'artwork.minSize'],
      [{ minSize: 1401 }, 'artwork.minSize'],
      [{ stationImageVersionId: foreign.versionId }, 'artwork.stationImageVersionId'],
    ] as const) {
      const res = await admin(server.url, 'PATCH', `/stations/${st.id}`, { artwork });
      expect(res.status).to.equal(400);
      expect(JSON.stringify(res.body)).to.include(field);
    }
    const ok = await admin(server.url, 'PATCH', `/stations/${st.id}`, { artwork: { minSize: 1400, fallback: false } });
    expect(ok.body.artwork).to.deep.equal({ minSize: 1400, fallback: false, stationImageVersionId: null });
  });

  it('a higher minSize refuses what the default kept; fallback off shows no station image', async () => {
    const { station: st, ingestToken, listenerToken } = await station();
    await admin(server.url, 'PATCH', `/stations/${st.id}`, { artwork: { minSize: 1000, fallback: false } });
    const url = images.serve(path('mid'), await png(19, 800, 800));
    await ingest(server.url, st, ingestToken, { artist: 'H', title: 'Mid', artworkUrl: url });
    const check = await until(() => server.svc.db('artwork_checks').where({ station_id: st.id, url }).first());
    expect(check).to.include({ status: 'rejected', reason: 'too-small' });
    await resolved(st.id);
    expect((await track(st.slug, listenerToken)).artwork).to.equal(null);
  });
});
