import { expect } from 'chai';
import sharp from 'sharp';
import { admin } from '../../support/http.ts';
import { createStation, eventually } from '../../support/factories.ts';
import { sharedServer, useSharedServerWithWorkers, type TestServer } from '../../support/server.ts';
import { uploaded } from '../media/helpers.ts';
import { enabledSetting, get, patchRadioDns, picture, uploadLogo } from './helpers.ts';

// docs/radiodns.md#the-radiodns-station-setting: the `radiodns` station setting (validated on admin POST/PATCH, 400
// naming the field; a logo smaller than 600×600 is 400) and the logo renditions.

describe('radiodns setting', () => {
  let server: TestServer;
  before(async () => {
    server = await sharedServer();
  });

  it('defaults to disabled with every key present in the admin view', async () => {
    const station = await createStation(server.url);
    const res = await admin(server.url, 'GET', `/stations/${station.id}`);
    expect(res.body.radiodns).to.deep.equal({
      enabled: false,
      fqdn: null,
      serviceIdentifier: null,
      shortName: null,
      mediumName: null,
      bearers: [],
      logoVersionId: null,
      genres: [],
    });
  });

  const invalid: Array<[string, Record<string, unknown>, string]> = [
    ['serviceIdentifier with capitals', { serviceIdentifier: 'Wave1' }, 'radiodns.serviceIdentifier'],
    ['serviceIdentifier over 16', { serviceIdentifier: 'a'.repeat(17) }, 'radiodns.serviceIdentifier'],
    ['shortName over 8', { shortName: 'Nine char' }, 'radiodns.shortName'],
    ['empty shortName', { shortName: '' }, 'radiodns.shortName'],
    ['mediumName over 16', { mediumName: 'Seventeen chars!!' }, 'radiodns.mediumName'],
    ['fqdn with a path', { fqdn: 'radio.example/x' }, 'radiodns.fqdn'],
    ['fm bearer without frequency', { bearers: [{ id: 'fm:de0.d3a1', cost: 10 }] }, 'radiodns.bearers.0.id'],
    ['unknown bearer scheme', { bearers: [{ id: 'am:de0.d3a1.10170', cost: 10 }] }, 'radiodns.bearers.0.id'],
    ['negative cost', { bearers: [{ id: 'fm:de0.d3a1.10170', cost: -1 }] }, 'radiodns.bearers.0.cost'],
    ['genre outside ContentCS', { genres: [{ href: 'urn:example:pop', name: 'Pop' }] }, 'radiodns.genres.0.href'],
    ['logoVersionId not a UUID', { logoVersionId: 'logo' }, 'radiodns.logoVersionId'],
    ['unknown key', { colour: 'red' }, 'radiodns.colour'],
  ];
  for (const [name, setting, path] of invalid) {
    it(`PATCH: 400 naming the field: ${name}`, async () => {
      const station = await createStation(server.url);
      const res = await patchRadioDns(server.url, station.id, setting);
      expect(res.status, JSON.stringify(res.body)).to.equal(400);
      expect(res.body.error.code).to.equal('VALIDATION_ERROR');
      expect(res.body.error.issues.map((i: { path: string }) => i.path)).to.include(path);
    });
  }

  it('POST validates it too; enabled needs fqdn, serviceIdentifier, shortName and mediumName', async () => {
    const bad = await admin(server.url, 'POST', '/stations', {
      slug: `rd-${Date.now().toString(36)}`,
      name: 'X',
      timezone: 'Europe/Berlin',
      radiodns: { enabled: true, shortName: 'X' },
    });
    expect(bad.status).to.equal(400);
    expect(bad.body.error.issues.map((i: { path: string }) => i.path)).to.include.members([
      'radiodns.fqdn',
      'radiodns.serviceIdentifier',
      'radiodns.mediumName',
    ]);
    const good = await createStation(server.url, { radiodns: enabledSetting('Post.Example.COM') });
    const res = await admin(server.url, 'GET', `/stations/${good.id}`);
    expect(res.body.radiodns).to.include({ enabled: true, fqdn: 'post.example.com', serviceIdentifier: 'wave1' });
  });

  it('PATCH merges into what is stored', async () => {
    const station = await createStation(server.url, { radiodns: enabledSetting('merge.example') });
    const res = await patchRadioDns(server.url, station.id, { shortName: 'Other' });
    expect(res.status).to.equal(200);
    expect(res.body.radiodns).to.include({ fqdn: 'merge.example', shortName: 'Other', mediumName: 'Waveline FM' });
    expect(res.body.radiodns.bearers).to.have.length(2);
  });

  it('the logo must be an uploaded image version of that station, at least 600×600 (else 400 naming logoVersionId)', async () => {
    const station = await createStation(server.url);
    const other = await createStation(server.url);
    const small = await uploadLogo(server.url, station.id, 800, 599);
    const foreign = await uploadLogo(server.url, other.id);
    const audio = (await uploaded(server.url, station.id, Buffer.from('ID3not really audio'), 'audio/mpeg')).versionId;
    for (const logoVersionId of [small, foreign, audio, '00000000-0000-4000-8000-000000000000']) {
      const res = await patchRadioDns(server.url, station.id, { logoVersionId });
      expect(res.status, logoVersionId).to.equal(400);
      expect(res.body.error.issues[0].path).to.equal('radiodns.logoVersionId');
    }
    const ok = await uploadLogo(server.url, station.id, 600, 600);
    const res = await patchRadioDns(server.url, station.id, { logoVersionId: ok });
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    expect(res.body.radiodns.logoVersionId).to.equal(ok);
  });
});

/** Alpha and red of pixel (x, y) of a PNG. */
async function pixel(png: Buffer, x: number, y: number): Promise<{ alpha: number; red: number }> {
  const { data, info } = await sharp(png).ensureAlpha().raw().toBuffer({ resolveWithObject: true });
  const at = (y * info.width + x) * info.channels;
  return { red: data[at], alpha: data[at + 3] };
}

const SIZES = ['32x32', '112x32', '128x128', '320x240', '600x600'];

describe('radiodns logo renditions', () => {
  const { server } = useSharedServerWithWorkers();

  it('the worker renders the five PNG sizes when the logo is set: letterboxed on transparent bars, aspect kept', async () => {
    const station = await createStation(server.url);
    const logo = await uploadLogo(server.url, station.id, 1200, 600); // 2:1, red
    expect((await patchRadioDns(server.url, station.id, { logoVersionId: logo })).status).to.equal(200);
    await eventually(
      async () => {
        const [{ count }] = await server.svc.db('radiodns_logos').where({ version_id: logo }).count({ count: '*' });
        if (Number(count) !== 5) throw new Error(`${count} renditions stored`);
        return true;
      },
      { timeoutMs: 30_000 },
    );
    for (const size of SIZES) {
      const res = await get(server.url, `/radiodns/logos/${station.id}/${logo}/${size}.png`);
      expect(res.status, size).to.equal(200);
      expect(res.headers['content-type']).to.equal('image/png');
      expect(res.headers['cache-control']).to.equal('public, max-age=300');
      const meta = await sharp(res.body).metadata();
      expect(`${meta.width}x${meta.height}`).to.equal(size);
      expect(meta.hasAlpha).to.equal(true);
    }
    // 600×600: the 2:1 picture is 600×300 in the middle, 150 px transparent bars above and below.
    const big = (await get(server.url, `/radiodns/logos/${station.id}/${logo}/600x600.png`)).body;
    expect(await pixel(big, 300, 10)).to.include({ alpha: 0 });
    expect(await pixel(big, 300, 140)).to.include({ alpha: 0 });
    expect(await pixel(big, 300, 160)).to.deep.equal({ alpha: 255, red: 220 });
    expect(await pixel(big, 5, 300)).to.deep.equal({ alpha: 255, red: 220 });
    expect(await pixel(big, 300, 590)).to.include({ alpha: 0 });
    // 112×32: 64×32 in the middle, 24 px bars left and right.
    const wide = (await get(server.url, `/radiodns/logos/${station.id}/${logo}/112x32.png`)).body;
    expect(await pixel(wide, 10, 16)).to.include({ alpha: 0 });
    expect(await pixel(wide, 56, 16)).to.deep.equal({ alpha: 255, red: 220 });
    expect(await pixel(wide, 101, 16)).to.include({ alpha: 0 });
  });

  it('ETag and 304; an unlisted size, another version or an unknown station is 404', async () => {
    const station = await createStation(server.url);
    const logo = await uploadLogo(server.url, station.id, 700, 700);
    await patchRadioDns(server.url, station.id, { logoVersionId: logo });
    const first = await get(server.url, `/radiodns/logos/${station.id}/${logo}/128x128.png`);
    expect(first.status).to.equal(200);
    const etag = first.headers.etag as string;
    expect(etag).to.match(/^"[0-9a-f]{64}"$/);
    const again = await get(server.url, `/radiodns/logos/${station.id}/${logo}/128x128.png`, { 'if-none-match': etag });
    expect(again.status).to.equal(304);
    expect((await get(server.url, `/radiodns/logos/${station.id}/${logo}/100x100.png`)).status).to.equal(404);
    const older = await uploadLogo(server.url, station.id, 700, 700);
    expect((await get(server.url, `/radiodns/logos/${station.id}/${older}/128x128.png`)).status).to.equal(404);
    expect((await get(server.url, `/radiodns/logos/st_unknown/${logo}/128x128.png`)).status).to.equal(404);
  });
});

describe('radiodns logo renditions without the worker', () => {
  let server: TestServer;
  before(async () => {
    server = await sharedServer();
  });

  it('a rendition asked for before the worker rendered it is rendered then', async () => {
    const station = await createStation(server.url);
    const logo = await uploadLogo(server.url, station.id, 600, 900);
    await patchRadioDns(server.url, station.id, { logoVersionId: logo });
    const res = await get(server.url, `/radiodns/logos/${station.id}/${logo}/320x240.png`);
    expect(res.status).to.equal(200);
    // 2:3 into 320×240: 160×240 in the middle, 80 px bars left and right.
    const { data, info } = await sharp(res.body).ensureAlpha().raw().toBuffer({ resolveWithObject: true });
    expect([info.width, info.height]).to.deep.equal([320, 240]);
    const alpha = (x: number, y: number) => data[(y * info.width + x) * 4 + 3];
    expect([alpha(40, 120), alpha(160, 120), alpha(290, 120)]).to.deep.equal([0, 255, 0]);
    expect(await picture(1, 1)).to.be.instanceOf(Buffer);
  });
});
