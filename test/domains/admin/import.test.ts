import { expect } from 'chai';
import { startWorkers } from '../../../workers/index.ts';
import { useClockedServer } from '../../support/server.ts';
import { admin, request, type Reply } from '../../support/http.ts';
import { eventually } from '../../support/factories.ts';
import { bundleIds, picture, sampleBundle } from './helpers.ts';

// POST /admin/v1/import through real HTTP; every part checked through the listener routes.

const NOW = '2026-03-10T09:30:00.000Z'; // a Tuesday, 10:30 in Berlin (CET)

describe('POST /admin/v1/import', function () {
  this.timeout(30_000);
  const { server } = useClockedServer(NOW);
  let image: Buffer;
  before(async () => {
    image = await picture();
  });

  describe('a complete bundle', () => {
    const ids = bundleIds();
    let res: Reply;
    let tokens: Record<string, string>;
    let get: (path: string) => Promise<Reply>;
    before(async () => {
      res = await admin(server.url, 'POST', '/import', sampleBundle(ids, image));
      expect(res.status, JSON.stringify(res.body)).to.equal(201);
      tokens = Object.fromEntries(res.body.credentials.map((c: { scopes: string[]; token: string }) => [c.scopes[0], c.token]));
      get = (path) => request(server.url, 'GET', `/api/v1/stations/${ids.slug}${path}`, { token: tokens['listener:read'] });
    });

    it('answers 201 with the created station, each credential’s secret (shown once), types, media, records and schedule', () => {
      const body = res.body;
      expect(body.station).to.include({ slug: ids.slug, name: 'Import FM', timezone: 'Europe/Berlin', active: true });
      expect(body.credentials.map((c: { scopes: string[] }) => c.scopes)).to.deep.equal([
        ['listener:read'],
        ['push:register'],
        ['ingest:write'],
      ]);
      for (const c of body.credentials) expect(c.token).to.match(/^wvl_[0-9A-Za-z]{46}$/);
      expect(body.types).to.deep.equal([
        { key: 'news', version: 1 },
        { key: 'episode', version: 1 },
      ]);
      expect(body.media[0]).to.include({ key: 'cover', kind: 'image', mime: 'image/png', width: 800, height: 400 });
      expect(body.records.map((r: { id: string; publishedAt: string | null }) => [r.id, r.publishedAt !== null])).to.deep.equal([
        [ids.news[0], true],
        [ids.news[1], true],
        [ids.news[2], false],
        [ids.episode, true],
      ]);
      expect(body.presenters.map((p: { id: string }) => p.id)).to.deep.equal(ids.presenters);
      expect(body.programs.map((p: { id: string }) => p.id)).to.deep.equal(ids.programs);
      expect(body.rundowns).to.deep.equal([{ broadcastId: ids.broadcasts[0], items: 3 }]);
    });

    it('resolves relative broadcast times on the import day in the station time zone; absolute ones are kept, in UTC like every timestamp', () => {
      const times = Object.fromEntries(
        res.body.broadcasts.map((b: { id: string; startsAt: string; endsAt: string }) => [b.id, [b.startsAt, b.endsAt]]),
      );
      expect(times[ids.broadcasts[0]]).to.deep.equal(['2026-03-10T05:00:00.000Z', '2026-03-10T11:00:00.000Z']);
      expect(times[ids.broadcasts[1]]).to.deep.equal(['2026-03-10T11:00:00.000Z', '2026-03-10T19:00:00.000Z']);
      expect(times[ids.broadcasts[3]]).to.deep.equal(['2026-03-11T11:00:00.000Z', '2026-03-11T19:00:00.000Z']);
      expect(times[ids.broadcasts[2]]).to.deep.equal(['2026-03-11T05:00:00.000Z', '2026-03-11T11:00:00.000Z']);
    });

    it('serves the station document with the profile to the imported listener credential', async () => {
      const doc = await get('');
      expect(doc.status).to.equal(200);
      expect(doc.body).to.include({ slug: ids.slug, name: 'Import FM' });
      expect(doc.body.profile).to.include({ tagline: 'Imported', contactEmail: 'studio@import.example' });
      expect(doc.body.profile.websiteUrls).to.deep.equal(['https://import.example']);
    });

    it('delivers the published records (media keys mapped to the created version ids, forward references kept) and not the draft', async () => {
      const versionId = res.body.media[0].versionId;
      const news = await get('/content?type=news');
      expect(news.status).to.equal(200);
      const byId = Object.fromEntries(news.body.records.map((r: { id: string }) => [r.id, r]));
      expect(Object.keys(byId).sort()).to.deep.equal([ids.news[0], ids.news[1]].sort());
      expect(byId[ids.news[0]].values).to.deep.equal({
        title: 'First',
        slug: 'first',
        category: 'local',
        image: versionId,
        related: [ids.news[1]],
      });
      expect(byId[ids.news[0]].media.map((m: { versionId: string }) => m.versionId)).to.deep.equal([versionId]);
      expect(byId[ids.news[1]].media[0]).to.include({ versionId, alt: 'A blue picture', credits: 'Test' });
      expect(byId[ids.news[1]].related.programIds).to.deep.equal([ids.programs[0]]);
      const episodes = await get('/content?type=episode');
      expect(episodes.body.records[0].values.gallery).to.deep.equal([{ photo: versionId, caption: 'Studio' }]);
      const schemas = await get('/schemas');
      expect(schemas.body.types.map((t: { key: string }) => t.key)).to.deep.equal(['episode', 'news']);
    });

    it('lists the broadcasts in the schedule, the programs, and the current broadcast of the import day', async () => {
      const schedule = await get('/schedule');
      expect(schedule.status).to.equal(200);
      expect(schedule.body.broadcasts.map((b: { id: string }) => b.id)).to.deep.equal([
        ids.broadcasts[0],
        ids.broadcasts[1],
        ids.broadcasts[2],
        ids.broadcasts[3],
      ]);
      const repeat = schedule.body.broadcasts.find((b: { id: string }) => b.id === ids.broadcasts[3]);
      expect(repeat).to.include({ repeatOfId: ids.broadcasts[1], nature: 'repeat', title: 'Afternoon Mix' });
      expect(repeat.presenters).to.deep.equal([{ id: ids.presenters[1], title: 'Ben Voice', image: null }]);
      const programs = await get('/programs');
      expect(programs.body.programs.map((p: { title: string }) => p.title)).to.deep.equal(['Afternoon Mix', 'Morning Drive']);
      const current = await get('/broadcast/current');
      expect(current.body.broadcast).to.include({ id: ids.broadcasts[0], title: 'Morning Drive', status: 'live' });
    });

    it('builds the on-air feed row from the imported rundown', async () => {
      const row = await server.svc.db('feed_rows').where({ station_id: res.body.station.id, kind: 'on-air', entry: 'current' }).first();
      expect(row.data.broadcast.id).to.equal(ids.broadcasts[0]);
      expect(row.data.position).to.include({ kind: 'talk', title: 'News', index: 2, plannedStartsAt: '2026-03-10T09:00:00.000Z' });
    });

    it('makes the imported image public: original bytes at once, variants once the worker rendered them', async () => {
      const { versionId } = res.body.media[0];
      const station = res.body.station.id;
      const original = await fetch(`${server.url}/api/media/public/${station}/${versionId}`);
      expect(original.status).to.equal(200);
      expect(Buffer.from(await original.arrayBuffer()).equals(image)).to.equal(true);
      const workers = await startWorkers(server.svc);
      try {
        const thumb = await eventually(
          async () => {
            const r = await fetch(`${server.url}/api/media/public/${station}/${versionId}/thumb`);
            return r.status === 200 ? r : null;
          },
          { timeoutMs: 15_000 },
        );
        expect(thumb!.headers.get('content-type')).to.equal('image/webp');
      } finally {
        await workers.close();
      }
    });

    it('creates working credentials of each scope (listed by the admin API, never with their secret)', async () => {
      const list = await admin(server.url, 'GET', `/stations/${res.body.station.id}/credentials`);
      expect(list.body.credentials.map((c: { label: string }) => c.label)).to.deep.equal(['web', 'app', 'encoder']);
      expect(list.text).not.to.include(tokens['listener:read']);
      const wrongScope = await request(server.url, 'GET', `/api/v1/stations/${ids.slug}`, { token: tokens['push:register'] });
      expect(wrongScope.status).to.equal(401);
    });

    it('refuses the same bundle again with 409 on the slug: there is no upsert', async () => {
      const again = await admin(server.url, 'POST', '/import', sampleBundle(ids, image));
      expect(again.status).to.equal(409);
      expect(again.body.error.code).to.equal('CONFLICT');
      expect(again.body.error.issues[0].path).to.equal('station.slug');
    });
  });

  it('imports records that reference each other in a cycle', async () => {
    const ids = bundleIds();
    const bundle = sampleBundle(ids, image);
    bundle.records[1].values = { ...bundle.records[1].values, related: [ids.news[0]] } as (typeof bundle.records)[1]['values'];
    const res = await admin(server.url, 'POST', '/import', bundle);
    expect(res.status, JSON.stringify(res.body)).to.equal(201);
    const list = await admin(server.url, 'GET', `/stations/${res.body.station.id}/credentials`);
    expect(list.status).to.equal(200);
    const token = res.body.credentials[0].token;
    const second = await request(server.url, 'GET', `/api/v1/stations/${ids.slug}/content/${ids.news[1]}`, { token });
    expect(second.body.values.related).to.deep.equal([ids.news[0]]);
  });

  it('imports stream keys and latencies (stream-{n} where left out) and the upNext setting; the on-air row carries upNext', async () => {
    const ids = bundleIds();
    const bundle = sampleBundle(ids, image) as ReturnType<typeof sampleBundle> & Record<string, unknown>;
    bundle.station = {
      ...bundle.station,
      profile: {
        ...bundle.station.profile,
        streamUrls: [
          { url: 'https://stream.import.example/a.mp3', key: 'mp3', latencySeconds: 8 },
          { url: 'https://stream.import.example/b.aac' },
        ],
      },
      upNext: { enabled: true, count: 3 },
    } as typeof bundle.station;
    const res = await admin(server.url, 'POST', '/import', bundle);
    expect(res.status, JSON.stringify(res.body)).to.equal(201);
    expect(res.body.station.upNext).to.deep.equal({ enabled: true, count: 3 });
    expect(
      res.body.station.profile.streamUrls.map((u: { key: string; latencySeconds: number }) => [u.key, u.latencySeconds]),
    ).to.deep.equal([
      ['mp3', 8],
      ['stream-2', 0],
    ]);
    const row = await server.svc.db('feed_rows').where({ station_id: res.body.station.id, kind: 'on-air', entry: 'current' }).first('data');
    expect(row.data.upNext, 'a broadcast of the bundle is on air at the import').to.be.an('array');
  });

  it('needs the operator token (401)', async () => {
    const res = await request(server.url, 'POST', '/admin/v1/import', { json: sampleBundle(bundleIds(), image) });
    expect(res.status).to.equal(401);
  });
});
