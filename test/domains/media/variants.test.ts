import { expect } from 'chai';
import sharp from 'sharp';
import { sharedServer, useSharedServerWithWorkers } from '../../support/server.ts';
import { request } from '../../support/http.ts';
import { createStation, createToken, eventually } from '../../support/factories.ts';
import { mediaVariants } from '../../../workers/mediaVariants.ts';
import { mediaRefresh } from '../../../workers/mediaRefresh.ts';
import { storeRenditions } from '../../../src/domains/media/commands.ts';
import { renderVariants } from '../../../src/domains/media/render.ts';
import { fetchMedia, mediaPath, pixels, png, publishWithMedia, uploaded, wav, withRedBlock } from './helpers.ts';

/** Waits until the worker has rendered every variant of a published version; returns their bytes. */
async function renderedVariants(url: string, stationId: string, versionId: string): Promise<Record<string, Buffer>> {
  const out: Record<string, Buffer> = {};
  for (const variant of ['thumb', 'display', 'card', 'square']) {
    const res = (await eventually(
      async () => {
        const r = await fetchMedia(url, mediaPath(stationId, versionId, variant));
        return r.status === 200 ? r : null;
      },
      { timeoutMs: 15_000 },
    ))!;
    expect(res.headers.get('content-type')).to.equal('image/webp');
    out[variant] = res.bytes;
  }
  return out;
}

async function dimensions(bytes: Buffer) {
  const meta = await sharp(bytes).metadata();
  return { format: meta.format, width: meta.width, height: meta.height };
}

describe('media variants (worker job media.variants)', function () {
  this.timeout(30_000);
  const { server } = useSharedServerWithWorkers();

  it('renders thumb 320 px wide and display 1280 px wide (aspect kept), card 1280×720 and square 640×640, all WebP', async () => {
    const station = await createStation(server.url);
    const media = await uploaded(server.url, station.id, await png(2000, 1000), 'image/png');
    await publishWithMedia(server.url, station.id, [media.versionId]);
    const v = await renderedVariants(server.url, station.id, media.versionId);
    expect(await dimensions(v.thumb)).to.deep.equal({ format: 'webp', width: 320, height: 160 });
    expect(await dimensions(v.display)).to.deep.equal({ format: 'webp', width: 1280, height: 640 });
    expect(await dimensions(v.card)).to.deep.equal({ format: 'webp', width: 1280, height: 720 });
    expect(await dimensions(v.square)).to.deep.equal({ format: 'webp', width: 640, height: 640 });
    expect(v.thumb.subarray(0, 4).toString('latin1') + v.thumb.subarray(8, 12).toString('latin1')).to.equal('RIFFWEBP');
  });

  it('never upscales thumb and display; card and square always have their exact size', async () => {
    const station = await createStation(server.url);
    const media = await uploaded(server.url, station.id, await png(200, 100), 'image/png');
    await publishWithMedia(server.url, station.id, [media.versionId]);
    const v = await renderedVariants(server.url, station.id, media.versionId);
    expect(await dimensions(v.thumb)).to.include({ width: 200, height: 100 });
    expect(await dimensions(v.display)).to.include({ width: 200, height: 100 });
    expect(await dimensions(v.card)).to.include({ width: 1280, height: 720 });
    expect(await dimensions(v.square)).to.include({ width: 640, height: 640 });
  });

  it('crops card and square around the focal point: the red block at (0.7, 0.5) lands in the middle of both', async () => {
    const station = await createStation(server.url);
    const picture = await withRedBlock(6000, 1000, 4200, 500);
    const focused = await uploaded(server.url, station.id, picture, 'image/png', { focalX: 0.7, focalY: 0.5 });
    const centred = await uploaded(server.url, station.id, picture, 'image/png');
    await publishWithMedia(server.url, station.id, [focused.versionId, centred.versionId]);

    const f = await renderedVariants(server.url, station.id, focused.versionId);
    const card = await pixels(f.card);
    expect(card.isRed(640, 360), 'card centre').to.equal(true);
    // 200 px scaled by 720/1000 → a 144 px block, all of it inside the card
    expect(card.red).to.be.within(144 * 144 * 0.9, 144 * 144 * 1.1);
    expect(card.isRed(640 - 90, 360) || card.isRed(640 + 90, 360), 'the block is centred, not offset').to.equal(false);
    const square = await pixels(f.square);
    expect(square.isRed(320, 320), 'square centre').to.equal(true);
    expect(square.red).to.be.within(128 * 128 * 0.9, 128 * 128 * 1.1); // 200 px × 640/1000

    const c = await renderedVariants(server.url, station.id, centred.versionId);
    expect((await pixels(c.card)).red, 'default focal point is the centre: the block is cropped away').to.equal(0);
    expect((await pixels(c.square)).red).to.equal(0);
    expect((await pixels(c.display)).red, 'display keeps the whole picture').to.be.greaterThan(0);
  });

  it('keeps the crop inside the picture when the focal point is at an edge (1, 0): the corner block ends up in the corner', async () => {
    const station = await createStation(server.url);
    const media = await uploaded(server.url, station.id, await withRedBlock(6000, 1000, 5900, 100), 'image/png', { focalX: 1, focalY: 0 });
    await publishWithMedia(server.url, station.id, [media.versionId]);
    const square = await pixels((await renderedVariants(server.url, station.id, media.versionId)).square);
    // crop = the right-most 1000×1000; block x 5800–6000, y 0–200 → output x 512–640, y 0–128
    expect(square.isRed(600, 40)).to.equal(true);
    expect(square.isRed(500, 40)).to.equal(false);
    expect(square.isRed(600, 140)).to.equal(false);
    expect(square.isRed(320, 320)).to.equal(false);
  });

  it('is idempotent: job id = version id, and running it again overwrites the same four renditions', async () => {
    const station = await createStation(server.url);
    const media = await uploaded(server.url, station.id, await png(800, 600), 'image/png');
    const job = await server.svc.jobs.queue('media').getJob(media.versionId);
    expect(job?.name).to.equal('media.variants');
    expect(job?.data).to.deep.equal({ stationId: station.id, versionId: media.versionId });
    const rows = () =>
      server.svc
        .db('media_files')
        .where({ version_id: media.versionId })
        .whereNot({ variant: 'original' })
        .orderBy('variant')
        .select('variant', 'etag', 'width', 'height', 'mime', 'size');
    const first = (await eventually(async () => ((await rows()).length === 4 ? rows() : null), { timeoutMs: 15_000 }))!;
    const again = await mediaVariants({ stationId: station.id, versionId: media.versionId }, server.svc);
    expect(again.rendered).to.deep.equal(['thumb', 'display', 'card', 'square']);
    expect(await rows()).to.deep.equal(first);
    expect(first.map((r) => r.variant)).to.deep.equal(['card', 'display', 'square', 'thumb']);
    expect(first.every((r) => r.mime === 'image/webp' && /^"[0-9a-f]{64}"$/.test(r.etag))).to.equal(true);
  });

  it('audio and other media have no variants: no job, no renditions, variants all null', async () => {
    const station = await createStation(server.url);
    const { token } = await createToken(server.url, station.id);
    const audio = await uploaded(server.url, station.id, wav(1), 'audio/wav');
    const file = await uploaded(server.url, station.id, Buffer.from('hello'), 'text/plain');
    expect(await server.svc.jobs.queue('media').getJob(audio.versionId)).to.equal(undefined);
    expect((await mediaVariants({ stationId: station.id, versionId: audio.versionId }, server.svc)).rendered).to.deep.equal([]);
    const recordId = await publishWithMedia(server.url, station.id, [audio.versionId, file.versionId]);
    const record = (await request(server.url, 'GET', `/api/v1/stations/${station.slug}/content/${recordId}`, { token })).body;
    for (const item of record.media) expect(item.variants).to.deep.equal({ thumb: null, display: null, card: null, square: null });
    expect(await server.svc.db('media_files').whereIn('version_id', [audio.versionId, file.versionId]).pluck('variant')).to.deep.equal([
      'original',
      'original',
    ]);
    expect((await fetchMedia(server.url, mediaPath(station.id, audio.versionId, 'thumb'))).status).to.equal(404);
  });
});

describe('image variants are paths from the first delivery', function () {
  this.timeout(30_000);

  it('a record published before the worker rendered anything already carries the four paths; a rendition asked for then is rendered on demand', async () => {
    const server = await sharedServer();
    const station = await createStation(server.url);
    const { token } = await createToken(server.url, station.id);
    const media = await uploaded(server.url, station.id, await png(1600, 900), 'image/png', { alt: 'Studio' });
    await server.svc.jobs.queue('media').remove(media.versionId); // no worker renders it: the request must
    const recordId = await publishWithMedia(server.url, station.id, [media.versionId]);
    const read = async () => (await request(server.url, 'GET', `/api/v1/stations/${station.slug}/content/${recordId}`, { token })).body;
    const first = await read();
    const base = mediaPath(station.id, media.versionId);
    expect(first.media[0]).to.include({ versionId: media.versionId, kind: 'image', width: 1600, height: 900, alt: 'Studio', url: base });
    expect(first.media[0].variants).to.deep.equal({
      thumb: `${base}/thumb`,
      display: `${base}/display`,
      card: `${base}/card`,
      square: `${base}/square`,
    });
    const feedRow = await server.svc.db('feed_rows').where({ station_id: station.id, kind: 'content', entry: recordId }).first();
    expect(feedRow.data.media[0].variants.square).to.equal(`${base}/square`);
    expect(await server.svc.db('media_files').where({ version_id: media.versionId }).pluck('variant')).to.deep.equal(['original']);

    // Two requests at once share one rendering; HEAD answers like GET.
    const [card, head] = await Promise.all([
      fetchMedia(server.url, `${base}/card`),
      fetchMedia(server.url, `${base}/card`, { method: 'HEAD' }),
    ]);
    expect(card.status).to.equal(200);
    expect(card.headers.get('content-type')).to.equal('image/webp');
    expect(await dimensions(card.bytes)).to.deep.equal({ format: 'webp', width: 1280, height: 720 });
    expect(head.status).to.equal(200);
    for (const variant of ['thumb', 'display', 'square'])
      expect((await fetchMedia(server.url, `${base}/${variant}`)).status, variant).to.equal(200);
    expect((await server.svc.db('media_files').where({ version_id: media.versionId }).pluck('variant')).sort()).to.deep.equal([
      'card',
      'display',
      'original',
      'square',
      'thumb',
    ]);
    expect((await read()).publicationId, 'the record is not re-presented').to.equal(first.publicationId);
  });

  it('an unpublished image version is not rendered on demand (404, nothing stored)', async () => {
    const server = await sharedServer();
    const station = await createStation(server.url);
    const media = await uploaded(server.url, station.id, await png(300, 200), 'image/png');
    await server.svc.jobs.queue('media').remove(media.versionId);
    expect((await fetchMedia(server.url, mediaPath(station.id, media.versionId, 'thumb'))).status).to.equal(404);
    expect(await server.svc.db('media_files').where({ version_id: media.versionId }).pluck('variant')).to.deep.equal(['original']);
  });
});

describe('media.refresh (the second look after rendering)', () => {
  it('is enqueued a few seconds after the variants job; a record published before rendering needs no refresh (its paths were there)', async () => {
    const server = await sharedServer();
    const station = await createStation(server.url);
    const { token } = await createToken(server.url, station.id);
    const picture = await png(400, 300);
    const media = await uploaded(server.url, station.id, picture, 'image/png');
    await server.svc.jobs.queue('media').remove(media.versionId); // this test plays the worker itself
    const recordId = await publishWithMedia(server.url, station.id, [media.versionId]);
    // The race: renditions stored while the publish that read the files without them was committing.
    await storeRenditions(server.svc, media.versionId, await renderVariants(picture, { x: 0.5, y: 0.5 }), new Date());
    const read = async () => (await request(server.url, 'GET', `/api/v1/stations/${station.slug}/content/${recordId}`, { token })).body;
    const before = await read();
    expect(before.media[0].variants.thumb).to.equal(`${mediaPath(station.id, media.versionId)}/thumb`);
    expect(await mediaRefresh({ stationId: station.id, versionId: media.versionId }, server.svc), 'nothing to change').to.deep.equal({
      refreshedRecords: 0,
    });
    expect(await read()).to.deep.equal(before);

    await mediaVariants({ stationId: station.id, versionId: media.versionId }, server.svc);
    const job = await server.svc.jobs.queue('default').getJob(`refresh-${media.versionId}`);
    expect(job?.name).to.equal('media.refresh');
    expect(job?.opts.delay).to.equal(5000);
    await job?.remove();
  });
});
