import { randomBytes } from 'node:crypto';
import { feedListener } from '../../support/redisFeed.ts';
import { expect } from 'chai';
import { keys } from '../../../src/lib/keys.ts';
import { useClockedServer } from '../../support/server.ts';
import { admin, type Reply } from '../../support/http.ts';
import { createStation, eventually } from '../../support/factories.ts';
import { bundleIds, picture, sampleBundle, type BundleIds } from './helpers.ts';

// Bad bundles: 400 with issues whose paths point into the bundle, 409 for taken slugs and ids, and in
// every case nothing stored and nothing sent.

type Bundle = ReturnType<typeof sampleBundle>;
type Mutable = Record<string, any>;

describe('POST /admin/v1/import: errors and atomicity', function () {
  this.timeout(30_000);
  const { server } = useClockedServer('2026-03-10T09:30:00Z');
  let image: Buffer;
  before(async () => {
    image = await picture();
  });

  /** Nothing of the bundle is in the database: no station, records, presenters, programs or broadcasts. */
  async function expectNothingStored(ids: BundleIds): Promise<void> {
    const db = server.svc.db;
    expect(await db('stations').where({ slug: ids.slug }).first(), 'station').to.equal(undefined);
    expect(
      await db('records')
        .whereIn('id', [...ids.news, ids.episode])
        .pluck('id'),
      'records',
    ).to.deep.equal([]);
    expect(await db('presenters').whereIn('id', ids.presenters).pluck('id'), 'presenters').to.deep.equal([]);
    expect(await db('programs').whereIn('id', ids.programs).pluck('id'), 'programs').to.deep.equal([]);
    expect(await db('broadcasts').whereIn('id', ids.broadcasts).pluck('id'), 'broadcasts').to.deep.equal([]);
  }

  /** Imports a sample bundle changed by `change`; expects the status and nothing stored. */
  async function refused(status: number, change: (bundle: Mutable, ids: BundleIds) => void): Promise<Reply> {
    const ids = bundleIds();
    const bundle = sampleBundle(ids, image) as Mutable;
    change(bundle, ids);
    const res = await admin(server.url, 'POST', '/import', bundle);
    expect(res.status, JSON.stringify(res.body)).to.equal(status);
    await expectNothingStored(ids);
    return res;
  }

  const issueAt = (res: Reply, path: string) => {
    const issue = res.body.error.issues.find((i: { path: string }) => i.path === path);
    expect(issue, `issue at ${path} in ${JSON.stringify(res.body.error.issues)}`).to.be.an('object');
    return issue;
  };

  describe('400 VALIDATION_ERROR naming the bundle path', () => {
    it('for the bundle schema: a malformed record id, a misspelt station property (with suggestion), a bad relative start time', async () => {
      const res = await refused(400, (b) => {
        b.records[0].id = 'not-a-uuid';
        b.station.timezon = 'Europe/Berlin';
        b.broadcasts[1].relative.start = '6:00';
      });
      expect(res.body.error.code).to.equal('VALIDATION_ERROR');
      issueAt(res, 'records.0.id');
      expect(issueAt(res, 'station.timezon').suggestion).to.equal('timezone');
      issueAt(res, 'broadcasts.1.relative.start');
    });

    it('for a stream key given twice or a latency out of range, at the station path', async () => {
      const keyTwice = await refused(400, (b) => {
        b.station.profile = {
          streamUrls: [
            { url: 'https://stream.example.org/a.mp3', key: 'live' },
            { url: 'https://stream.example.org/b.m3u8', key: 'live' },
          ],
        };
      });
      expect(issueAt(keyTwice, 'station.profile.streamUrls.1.key').code).to.equal('duplicate');
      const late = await refused(400, (b) => {
        b.station.profile = { streamUrls: [{ url: 'https://stream.example.org/a.mp3', latencySeconds: 601 }] };
        b.station.upNext = { enabled: true, count: 9 };
      });
      issueAt(late, 'station.profile.streamUrls.0.latencySeconds');
      issueAt(late, 'station.upNext.count');
    });

    it('for ids given twice, unknown media keys (with suggestion), both or neither broadcast time forms, a rundown of no bundle broadcast', async () => {
      const res = await refused(400, (b, ids) => {
        b.records[2].id = ids.news[0].toUpperCase();
        b.records[0].values.image = 'covr';
        b.records[1].media = [{ key: 'nope' }];
        b.broadcasts[1].startsAt = '2026-03-10T05:00:00Z';
        delete b.broadcasts[3].endsAt;
        b.rundowns[0].broadcastId = ids.news[0];
        b.rundowns[0].items[2].plannedStartsAt = '2026-03-10T09:00:00Z';
      });
      expect(issueAt(res, 'records.2.id').code).to.equal('duplicate');
      expect(issueAt(res, 'records.0.values.image').suggestion).to.equal('cover');
      issueAt(res, 'records.1.media.0.key');
      issueAt(res, 'broadcasts.1.relative');
      expect(issueAt(res, 'broadcasts.3.endsAt').code).to.equal('required');
      issueAt(res, 'rundowns.0.broadcastId');
      issueAt(res, 'rundowns.0.items.2.offsetSeconds');
    });

    it('for media that is not base64, bytes that are not the declared image type, and an image type that cannot be rendered', async () => {
      const res = await refused(400, (b) => {
        b.media.push({ key: 'broken', mime: 'image/png', data: 'not base64!' });
        b.media.push({ key: 'text', mime: 'image/png', data: Buffer.from('hello').toString('base64') });
        b.media.push({ key: 'bmp', mime: 'image/bmp', data: Buffer.from('BM').toString('base64') });
      });
      issueAt(res, 'media.1.data');
      expect(issueAt(res, 'media.2.data').code).to.equal('invalid_image');
      issueAt(res, 'media.3.mime');
    });

    it('for domain rules, with the domain command’s issue under the part’s path', async () => {
      const cases: Array<[string, (b: Mutable, ids: BundleIds) => void, string?]> = [
        ['station.timezone', (b) => (b.station.timezone = 'Europe/Berlinn')],
        ['types.0.fields.2.choices', (b) => delete b.types[0].fields[2].choices],
        ['records.1.values.title', (b) => (b.records[1].values.title = 42)],
        ['records.0.values.titel', (b) => (b.records[0].values.titel = 'x'), 'title'],
        ['records.0.values.category', (b) => (b.records[0].values.category = 'musik'), 'music'],
        ['records.3.type', (b) => (b.records[3].type = 'episod'), 'episode'],
        ['programs.0.presenterIds.0', (b, ids) => (b.programs[0].presenterIds = [ids.episode])],
        ['broadcasts.1.programId', (b, ids) => (b.broadcasts[1].programId = ids.presenters[0])],
        ['broadcasts.3.endsAt', (b) => (b.broadcasts[3].endsAt = b.broadcasts[3].startsAt)],
        ['credentials.0.expiresAt', (b) => (b.credentials[0].expiresAt = '2030-01-01T00:00:00Z')],
      ];
      for (const [path, change, suggestion] of cases) {
        const res = await refused(400, change);
        const issue = issueAt(res, path);
        if (suggestion) expect(issue.suggestion, path).to.equal(suggestion);
      }
    });
  });

  describe('atomicity', () => {
    it('a bundle failing at its last step (publishing a record without its required title) leaves nothing: no rows, no feed frames, no jobs, no timers', async () => {
      const stationId = `st_import_${randomBytes(4).toString('hex')}`;
      const subscriber = feedListener();
      const frames: string[] = [];
      subscriber.onMessage((_channel: string, message: string) => frames.push(message));
      await subscriber.subscribe(stationId);
      try {
        const failing = await refused(400, (b) => {
          b.station.id = stationId;
          delete b.records[3].values.title; // a draft may lack it; publishing needs it
        });
        expect(issueAt(failing, 'records.3.values.title').code).to.equal('required');
        expect(await server.svc.db('media_versions').where({ station_id: stationId }).first()).to.equal(undefined);
        const jobs = await server.svc.jobs.queue('media').getJobs(['waiting', 'delayed', 'active', 'completed', 'failed']);
        expect(jobs.filter((j) => j.data.stationId === stationId)).to.deep.equal([]);
        expect(await server.svc.redis.smembers(keys.scheduleTimers(stationId))).to.deep.equal([]);

        // The same station id imported properly: its frames arrive, and none came before them.
        const ids = bundleIds();
        const ok = sampleBundle(ids, image) as Bundle & { station: { id?: string } };
        ok.station.id = stationId;
        const res = await admin(server.url, 'POST', '/import', ok);
        expect(res.status, JSON.stringify(res.body)).to.equal(201);
        await eventually(() => frames.some((f) => JSON.parse(f).kind === 'schedule'));
        const first = JSON.parse(frames[0]);
        expect(first.seq).to.equal(1);
        const contentEntries = frames
          .map((f) => JSON.parse(f))
          .filter((f) => f.kind === 'content')
          .map((f) => f.entry);
        expect(contentEntries.every((entry: string) => [...ids.news, ids.episode].includes(entry))).to.equal(true);
        const variantJobs = await server.svc.jobs.queue('media').getJobs(['waiting', 'delayed', 'active', 'completed', 'failed']);
        expect(variantJobs.filter((j) => j.data.stationId === stationId).map((j) => j.id)).to.deep.equal([res.body.media[0].versionId]);
      } finally {
        subscriber.disconnect();
      }
    });

    it('after a failed import the same bundle, corrected, imports (its ids were never taken)', async () => {
      const ids = bundleIds();
      const bundle = sampleBundle(ids, image) as Mutable;
      bundle.broadcasts[1].programId = ids.presenters[0];
      expect((await admin(server.url, 'POST', '/import', bundle)).status).to.equal(400);
      bundle.broadcasts[1].programId = ids.programs[0];
      const res = await admin(server.url, 'POST', '/import', bundle);
      expect(res.status, JSON.stringify(res.body)).to.equal(201);
    });
  });

  describe('409 CONFLICT', () => {
    it('for a slug another station has, naming station.slug; the existing station is untouched', async () => {
      const existing = await createStation(server.url, { name: 'Existing FM' });
      const ids = bundleIds();
      const bundle = sampleBundle(ids, image);
      bundle.station.slug = existing.slug;
      const res = await admin(server.url, 'POST', '/import', bundle);
      expect(res.status).to.equal(409);
      expect(res.body.error.code).to.equal('CONFLICT');
      issueAt(res, 'station.slug');
      const row = await server.svc.db('stations').where({ slug: existing.slug }).first();
      expect(row).to.include({ id: existing.id, name: 'Existing FM' });
      expect(await server.svc.db('content_types').where({ station_id: existing.id }).first()).to.equal(undefined);
      await expectNothingStored(ids);
    });

    it('for a record id of another station, naming records.N.id', async () => {
      const first = bundleIds();
      expect((await admin(server.url, 'POST', '/import', sampleBundle(first, image))).status).to.equal(201);
      const res = await refused(409, (b) => (b.records[2].id = first.news[2]));
      expect(res.body.error.code).to.equal('CONFLICT');
      issueAt(res, 'records.2.id');
    });

    it('for a presenter id of another station, naming presenters.N', async () => {
      const first = bundleIds();
      expect((await admin(server.url, 'POST', '/import', sampleBundle(first, image))).status).to.equal(201);
      const res = await refused(409, (b) => (b.presenters[1].id = first.presenters[0]));
      issueAt(res, 'presenters.1');
    });
  });
});
