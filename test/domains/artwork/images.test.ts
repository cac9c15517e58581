import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import sharp from 'sharp';
import { useClockedServer } from '../../support/server.ts';
import { admin, request } from '../../support/http.ts';
import { ingest, until } from '../../support/ingest.ts';
import { createToken } from '../../support/factories.ts';
import { mp3, png, uploaded } from '../media/helpers.ts';
import { putBroadcast, putPresenter, scheduleFixture, type ScheduleFixture } from '../schedule/helpers.ts';
import { gql } from '../../graphql/helpers.ts';
import { bundleIds, picture, sampleBundle } from '../admin/helpers.ts';

// docs/schedule.md#images: programs and presenters take an `imageVersionId` (an uploaded
// image version of the station); the listener reads that show them add `image: {url, variants}` or
// null, and the artwork fallback shows the program's, else the first presenter's image.

const issuePaths = (body: { error: { issues?: Array<{ path: string }> } }) => (body.error.issues ?? []).map((i) => i.path);

describe('artwork: program and presenter images', function () {
  this.timeout(30_000);
  const { server } = useClockedServer('2026-06-01T12:00:00Z', { workers: true });

  const uploadImage = async (stationId: string, side = 800, colour = '#884422') =>
    (await uploaded(server.url, stationId, await png(side, side, colour), 'image/png')).versionId;
  const putPresenterImage = (fx: ScheduleFixture, imageVersionId: unknown, title = 'Ana Host') =>
    admin(server.url, 'PUT', `/stations/${fx.station.id}/presenters/${fx.presenterId}`, { title, imageVersionId });
  const putProgramImage = (fx: ScheduleFixture, imageVersionId: unknown) =>
    admin(server.url, 'PUT', `/stations/${fx.station.id}/programs/${fx.programId}`, {
      title: 'Morning Show',
      presenterIds: [fx.presenterId],
      imageVersionId,
    });
  const get = (fx: ScheduleFixture, path: string) =>
    request(server.url, 'GET', `/api/v1/stations/${fx.station.slug}${path}`, { token: fx.token });
  /** Absolute URLs name the public base URL; the test server listens elsewhere. */
  const local = (url: string) => url.replace(server.svc.config.publicBaseUrl, server.url);
  const imageFor = (fx: ScheduleFixture, versionId: string) => {
    const url = `${server.svc.config.publicBaseUrl}/api/media/public/${fx.station.id}/${versionId}`;
    return { url, variants: { '300': `${url}/300`, '600': `${url}/600`, '1200': `${url}/1200` } };
  };
  const onAirNow = (fx: ScheduleFixture) => putBroadcast(server.url, fx, '2026-06-01T11:00:00Z', '2026-06-01T14:00:00Z');

  it('admin PUT sets and clears the image of a presenter and a program; the stored objects show imageVersionId', async () => {
    const fx = await scheduleFixture(server.url);
    const image = await uploadImage(fx.station.id);
    const presenter = await putPresenterImage(fx, image.toUpperCase());
    expect(presenter.status, JSON.stringify(presenter.body)).to.equal(200);
    expect(presenter.body.imageVersionId).to.equal(image);
    const program = await putProgramImage(fx, image);
    expect(program.status, JSON.stringify(program.body)).to.equal(200);
    expect(program.body.imageVersionId).to.equal(image);
    // The same PUT again writes nothing.
    const again = await putProgramImage(fx, image);
    expect(again.body.updatedAt).to.equal(program.body.updatedAt);
    // A PUT replaces the whole object: null (or no field) means no picture.
    expect((await putPresenterImage(fx, null)).body.imageVersionId).to.equal(null);
    expect((await putProgramImage(fx, undefined)).body.imageVersionId).to.equal(null);
  });

  it("refuses another station's image, a non-image version and an unknown id: 400 naming imageVersionId, nothing stored", async () => {
    const fx = await scheduleFixture(server.url);
    const other = await scheduleFixture(server.url);
    const foreign = await uploadImage(other.station.id);
    const audio = (await uploaded(server.url, fx.station.id, mp3(40), 'audio/mpeg')).versionId;
    for (const bad of [foreign, audio, randomUUID()]) {
      for (const res of [await putPresenterImage(fx, bad, 'Changed'), await putProgramImage(fx, bad)]) {
        expect(res.status, JSON.stringify(res.body)).to.equal(400);
        expect(res.body.error.code).to.equal('VALIDATION_ERROR');
        expect(issuePaths(res.body)).to.deep.equal(['imageVersionId']);
      }
    }
    const notUuid = await putPresenterImage(fx, 'logo');
    expect(notUuid.status).to.equal(400);
    expect(issuePaths(notUuid.body)).to.include('imageVersionId');
    expect(await server.svc.db('presenters').where({ id: fx.presenterId }).first()).to.include({
      title: 'Ana Host',
      image_version_id: null,
    });
    expect(await server.svc.db('programs').where({ id: fx.programId }).first()).to.include({ image_version_id: null });
  });

  it('programs, schedule, current broadcast, live and GraphQL show the images with absolute square variants (null when unset)', async () => {
    const fx = await scheduleFixture(server.url);
    const bare = await putPresenter(server.url, fx.station.id, 'No Picture');
    await onAirNow(fx);
    // Unset: null everywhere.
    const before = await get(fx, '/broadcast/current');
    expect(before.body.broadcast.program.image).to.equal(null);
    expect(before.body.broadcast.presenters[0].image).to.equal(null);

    const programImage = await uploadImage(fx.station.id, 900, '#113355');
    const presenterImage = await uploadImage(fx.station.id, 700, '#553311');
    expect((await putPresenterImage(fx, presenterImage)).status).to.equal(200);
    const program = await admin(server.url, 'PUT', `/stations/${fx.station.id}/programs/${fx.programId}`, {
      title: 'Morning Show',
      presenterIds: [fx.presenterId, bare],
      imageVersionId: programImage,
    });
    expect(program.status).to.equal(200);
    const programRef = { id: fx.programId, title: 'Morning Show', profileId: null, image: imageFor(fx, programImage) };
    const presenters = [
      { id: fx.presenterId, title: 'Ana Host', image: imageFor(fx, presenterImage) },
      { id: bare, title: 'No Picture', image: null },
    ];

    const programs = await get(fx, '/programs');
    expect(programs.body.programs[0]).to.deep.include({ image: programRef.image, presenters });
    const schedule = await get(fx, '/schedule');
    expect(schedule.body.broadcasts[0]).to.deep.include({ program: programRef, presenters });
    const current = await get(fx, '/broadcast/current');
    expect(current.body.broadcast).to.deep.include({ program: programRef, presenters });
    const live = await get(fx, '/live');
    expect(live.body.broadcast).to.deep.include({ program: programRef, presenters });

    const q = `{
      programs { programs { image { url variants { _300 _600 _1200 } } presenters { image { url variants { _600 } } } } }
      currentBroadcast { broadcast { program { image { url variants { _300 _600 _1200 } } } presenters { image { url } } } }
    }`;
    const res = await gql(server.url, fx.station.slug, fx.token, q);
    expect(res.body.errors, JSON.stringify(res.body.errors)).to.equal(undefined);
    const gqlImage = (v: { url: string; variants: Record<string, string> }) => ({
      url: v.url,
      variants: { _300: v.variants['300'], _600: v.variants['600'], _1200: v.variants['1200'] },
    });
    expect(res.body.data.programs.programs[0].image).to.deep.equal(gqlImage(programRef.image));
    expect(res.body.data.programs.programs[0].presenters).to.deep.equal([
      { image: { url: presenters[0].image?.url, variants: { _600: presenters[0].image?.variants['600'] } } },
      { image: null },
    ]);
    expect(res.body.data.currentBroadcast.broadcast.program.image).to.deep.equal(gqlImage(programRef.image));
    expect(res.body.data.currentBroadcast.broadcast.presenters).to.deep.equal([
      { image: { url: presenters[0].image?.url } },
      { image: null },
    ]);

    // The 600 variant is served: a square JPEG.
    for (const url of [programRef.image.variants['600'], presenters[0].image?.variants['600'] as string]) {
      const served = await fetch(local(url));
      expect(served.status).to.equal(200);
      expect(served.headers.get('content-type')).to.equal('image/jpeg');
      const meta = await sharp(Buffer.from(await served.arrayBuffer())).metadata();
      expect([meta.width, meta.height]).to.deep.equal([600, 600]);
    }
  });

  it('an import bundle names the picture of a program or presenter by `imageKey`; an unknown key or a non-image is 400 at that path', async () => {
    const image = await picture();
    type Bundle = ReturnType<typeof sampleBundle> & {
      presenters: Array<Record<string, unknown>>;
      programs: Array<Record<string, unknown>>;
    };
    const ids = bundleIds();
    const bundle = sampleBundle(ids, image) as Bundle;
    bundle.presenters[1].imageKey = 'cover';
    bundle.programs[0].imageKey = 'cover';
    const res = await admin(server.url, 'POST', '/import', bundle);
    expect(res.status, JSON.stringify(res.body)).to.equal(201);
    const cover = (res.body.media as Array<{ key: string; versionId: string }>).find((m) => m.key === 'cover')?.versionId;
    expect(await server.svc.db('presenters').where({ id: ids.presenters[1] }).first()).to.include({ image_version_id: cover });
    expect(await server.svc.db('presenters').where({ id: ids.presenters[0] }).first()).to.include({ image_version_id: null });
    expect(await server.svc.db('programs').where({ id: ids.programs[0] }).first()).to.include({ image_version_id: cover });

    const unknown = sampleBundle(bundleIds(), image) as Bundle;
    unknown.programs[1].imageKey = 'nope';
    const refused = await admin(server.url, 'POST', '/import', unknown);
    expect(refused.status, JSON.stringify(refused.body)).to.equal(400);
    expect(issuePaths(refused.body)).to.deep.equal(['programs.1.imageKey']);

    const notImage = sampleBundle(bundleIds(), image) as Bundle & { media: Array<Record<string, unknown>> };
    notImage.media.push({ key: 'sound', mime: 'audio/mpeg', data: mp3(40).toString('base64') });
    notImage.presenters[0].imageKey = 'sound';
    const refusedAudio = await admin(server.url, 'POST', '/import', notImage);
    expect(refusedAudio.status, JSON.stringify(refusedAudio.body)).to.equal(400);
    expect(issuePaths(refusedAudio.body)).to.deep.equal(['presenters.0.imageKey']);
  });

  it('the now-playing fallback shows the program image when a track has no art, else the first presenter’s', async () => {
    const nowPlayingArt = async (fx: ScheduleFixture, ingestToken: string, title: string) => {
      expect((await ingest(server.url, fx.station, ingestToken, { artist: 'Nobody', title })).status).to.be.oneOf([200, 201, 202]);
      return until(async () => {
        const track = (await get(fx, '/now-playing')).body.track;
        return track?.title === title && track.artwork ? track.artwork : null;
      });
    };
    // A program image set.
    const fx = await scheduleFixture(server.url, { rundownFollowing: false });
    const { token: ingestToken } = await createToken(server.url, fx.station.id, ['ingest:write']);
    await onAirNow(fx);
    const programImage = await uploadImage(fx.station.id, 800, '#224466');
    const presenterImage = await uploadImage(fx.station.id, 800, '#664422');
    expect((await putPresenterImage(fx, presenterImage)).status).to.equal(200);
    expect((await putProgramImage(fx, programImage)).status).to.equal(200);
    const programArt = await nowPlayingArt(fx, ingestToken, 'One');
    expect(programArt).to.deep.include({ source: 'program', ...imageFor(fx, programImage), width: 800, height: 800 });

    // Presenter only: the program has no image.
    const solo = await scheduleFixture(server.url, { rundownFollowing: false });
    const { token: soloIngest } = await createToken(server.url, solo.station.id, ['ingest:write']);
    await onAirNow(solo);
    const soloImage = await uploadImage(solo.station.id, 800, '#446622');
    expect((await putPresenterImage(solo, soloImage)).status).to.equal(200);
    const presenterArt = await nowPlayingArt(solo, soloIngest, 'Two');
    expect(presenterArt).to.deep.include({ source: 'presenter', ...imageFor(solo, soloImage) });
  });
});
