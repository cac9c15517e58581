import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { refreshRecordsUsingMedia } from '../../../src/domains/content/publish.ts';
import { useClockedServer } from '../../support/server.ts';
import { admin, request } from '../../support/http.ts';
import { ADMIN_TOKEN } from '../../support/env.ts';
import { createStation } from '../../support/factories.ts';
import { contentFixture, insertMedia, publish, published, putRecord, putType, storeWithNullVariants } from './helpers.ts';

const issuePaths = (body: { error: { issues: Array<{ path: string }> } }) => body.error.issues.map((i) => i.path);

describe('records: PUT /admin/v1/stations/{id}/records/{uuid}, publish, unpublish, DELETE', () => {
  const { clock, server } = useClockedServer('2026-11-21T10:00:00.000Z');

  describe('draft validation against the type’s current version', () => {
    it('checks kinds, maxLength, min/max, choices (with suggestion), multiple and maxItems, naming each value', async () => {
      const { station } = await contentFixture(server);
      const res = await putRecord(server.url, station.id, randomUUID(), {
        type: 'news',
        values: {
          title: 'x'.repeat(121),
          summary: 42,
          category: 'musik',
          tags: ['live', 'live'],
          rating: 6,
          featured: 'yes',
          event_at: '2026-13-45',
          titel: 'typo',
        },
      });
      expect(res.status).to.equal(400);
      expect(res.body.error.code).to.equal('VALIDATION_ERROR');
      const byPath = Object.fromEntries(res.body.error.issues.map((i: { path: string }) => [i.path, i]));
      expect(Object.keys(byPath)).to.include.members([
        'values.title',
        'values.summary',
        'values.category',
        'values.tags.1',
        'values.rating',
        'values.featured',
        'values.event_at',
        'values.titel',
      ]);
      expect(byPath['values.category'].suggestion).to.equal('music');
      expect(byPath['values.titel'].suggestion).to.equal('title');
      expect(byPath['values.rating'].suggestion).to.equal(5);
      const many = await putRecord(server.url, station.id, randomUUID(), {
        type: 'news',
        values: { tags: ['live', 'studio', 'interview', 'festival'] },
      });
      expect(issuePaths(many.body)).to.deep.equal(['values.tags']);
      const single = await putRecord(server.url, station.id, randomUUID(), { type: 'news', values: { tags: 'live' } });
      expect(issuePaths(single.body)).to.deep.equal(['values.tags']);
    });

    it('an unknown type is 400 with a suggestion; a record keeps its type', async () => {
      const { station } = await contentFixture(server);
      const unknown = await putRecord(server.url, station.id, randomUUID(), { type: 'newz', values: {} });
      expect(unknown.status).to.equal(400);
      expect(unknown.body.error.issues[0]).to.include({ path: 'type', suggestion: 'news' });
      await putType(server.url, station.id, 'show', [{ key: 'title', label: 'T', kind: 'text' }]);
      const id = randomUUID();
      expect((await putRecord(server.url, station.id, id, { type: 'news', values: { title: 'A' } })).status).to.equal(200);
      const moved = await putRecord(server.url, station.id, id, { type: 'show', values: { title: 'A' } });
      expect(moved.status).to.equal(400);
      expect(moved.body.error.issues[0].path).to.equal('type');
    });

    it('content references must point at a record of the targetType in the station; media versionIds must exist in the station', async () => {
      const { station } = await contentFixture(server);
      const other = await createStation(server.url);
      await putType(server.url, station.id, 'presenter', [{ key: 'name', label: 'Name', kind: 'text' }]);
      await putType(server.url, station.id, 'episode', [
        { key: 'title', label: 'Title', kind: 'text' },
        { key: 'host', label: 'Host', kind: 'content', targetType: 'presenter' },
        { key: 'guests', label: 'Guests', kind: 'content', targetType: 'presenter', multiple: true },
        { key: 'cover', label: 'Cover', kind: 'media' },
      ]);
      const presenter = await published(server.url, station.id, 'presenter', { name: 'Ann' });
      const news = await published(server.url, station.id, 'news', { title: 'Not a presenter' });
      const foreign = await insertMedia(server, other.id);
      const res = await putRecord(server.url, station.id, randomUUID(), {
        type: 'episode',
        values: { host: news, guests: [presenter, randomUUID()], cover: foreign.versionId },
        media: [{ versionId: randomUUID() }],
      });
      expect(res.status).to.equal(400);
      expect(issuePaths(res.body)).to.have.members(['values.host', 'values.guests.1', 'values.cover', 'media.0.versionId']);
      const ok = await putRecord(server.url, station.id, randomUUID(), {
        type: 'episode',
        values: { host: presenter, guests: [presenter] },
      });
      expect(ok.status, JSON.stringify(ok.body)).to.equal(200);
    });

    it('validates nested group values and the document shape', async () => {
      const { station } = await contentFixture(server);
      await putType(server.url, station.id, 'episode', [
        {
          key: 'credits',
          label: 'Credits',
          kind: 'group',
          multiple: true,
          maxItems: 2,
          fields: [
            { key: 'name', label: 'Name', kind: 'text', required: true },
            { key: 'role', label: 'Role', kind: 'choices', choices: [{ key: 'host', label: 'Host' }] },
          ],
        },
      ]);
      const res = await putRecord(server.url, station.id, randomUUID(), {
        type: 'episode',
        values: { credits: [{ name: 1, role: 'hots' }, { nmae: 'x' }] },
        document: {
          version: 1,
          mode: 'rich',
          blocks: [
            { id: 'a', type: 'paragraph', content: [{ text: 5, marks: [] }] },
            { id: 'a', type: 'paragraph', content: [] },
          ],
        },
      });
      expect(res.status).to.equal(400);
      expect(issuePaths(res.body)).to.include.members([
        'values.credits.0.name',
        'values.credits.0.role',
        'values.credits.1.nmae',
        'document.blocks.0.content.0.text',
        'document.blocks.1.id',
      ]);
      const badDoc = await putRecord(server.url, station.id, randomUUID(), { type: 'episode', values: {}, document: { blocks: 'no' } });
      expect(badDoc.status).to.equal(400);
    });

    it('saving the latest revision’s content again returns that revision (retries are harmless)', async () => {
      const { station } = await contentFixture(server);
      const id = randomUUID();
      expect((await putRecord(server.url, station.id, id, { type: 'news', values: { title: 'A' } })).body).to.deep.equal({
        id,
        revision: 1,
      });
      expect((await putRecord(server.url, station.id, id, { type: 'news', values: { title: 'A' } })).body.revision).to.equal(1);
      expect((await putRecord(server.url, station.id, id, { type: 'news', values: { title: 'B' } })).body.revision).to.equal(2);
    });

    it('a record id of another station is 409 on PUT and 404 on publish, unpublish', async () => {
      const a = await contentFixture(server);
      const b = await contentFixture(server);
      const id = await published(server.url, a.station.id, 'news', { title: 'Mine' });
      expect((await putRecord(server.url, b.station.id, id, { type: 'news', values: { title: 'Theirs' } })).status).to.equal(409);
      expect((await publish(server.url, b.station.id, id)).status).to.equal(404);
      expect((await admin(server.url, 'POST', `/stations/${b.station.id}/records/${id}/unpublish`)).status).to.equal(404);
      expect((await admin(server.url, 'DELETE', `/stations/${b.station.id}/records/${id}`)).status).to.equal(204);
      expect((await a.get(`/content/${id}`)).status, 'deleting through another station does nothing').to.equal(200);
    });
  });

  describe('publication', () => {
    it('required fields are checked at publish, nested ones too; drafts are never visible', async () => {
      const { station, get } = await contentFixture(server);
      const id = randomUUID();
      expect((await putRecord(server.url, station.id, id, { type: 'news', values: { summary: 'no title yet' } })).status).to.equal(200);
      expect((await get(`/content/${id}`)).status).to.equal(404);
      expect((await get('/content?type=news')).body.records).to.deep.equal([]);
      const res = await publish(server.url, station.id, id);
      expect(res.status).to.equal(400);
      expect(res.body.error.issues[0]).to.include({ path: 'values.title', code: 'required' });
      await putType(server.url, station.id, 'episode', [
        { key: 'credits', label: 'C', kind: 'group', fields: [{ key: 'name', label: 'N', kind: 'text', required: true }] },
      ]);
      const ep = randomUUID();
      await putRecord(server.url, station.id, ep, { type: 'episode', values: { credits: { name: '' } } });
      expect(issuePaths((await publish(server.url, station.id, ep)).body)).to.deep.equal(['values.credits.name']);
    });

    it('delivers the record shape: values without private/system fields, document, media with url and variants, related.programIds', async () => {
      const { station, get } = await contentFixture(server);
      const image = await insertMedia(server, station.id, { variants: ['thumb', 'display'] });
      const audio = await insertMedia(server, station.id, { kind: 'audio' });
      const programId = randomUUID();
      const id = randomUUID();
      await putRecord(server.url, station.id, id, {
        type: 'news',
        values: {
          title: 'Hello',
          slug: 'hello',
          category: 'music',
          tags: ['live', 'studio'],
          rating: 4.5,
          featured: false,
          event_at: '2026-12-01T20:00:00+01:00',
          internal_note: 'secret',
          sync_id: 'sys-1',
        },
        document: {
          version: 1,
          mode: 'rich',
          blocks: [{ id: 'b1', type: 'paragraph', content: [{ text: 'Hi', marks: ['bold'] }, { text: 'there' }] }],
        },
        media: [{ versionId: image.versionId }, { versionId: audio.versionId }],
        related: { programIds: [programId] },
      });
      const pub = await publish(server.url, station.id, id);
      expect(pub.body).to.deep.equal({ id, revision: 1, publishedAt: clock.now().toISOString() });
      const res = await get(`/content/${id}`);
      expect(res.status).to.equal(200);
      const record = res.body;
      expect(record).to.include({
        contractVersion: 1,
        id,
        revision: 1,
        type: 'news',
        schemaVersion: 1,
        publishedAt: clock.now().toISOString(),
        firstPublishedAt: clock.now().toISOString(),
      });
      expect(record.publicationId).to.match(/^[0-9a-f-]{36}$/);
      expect(record.values).to.deep.equal({
        title: 'Hello',
        slug: 'hello',
        category: 'music',
        tags: ['live', 'studio'],
        rating: 4.5,
        featured: false,
        event_at: '2026-12-01T19:00:00.000Z',
      });
      expect(res.text).not.to.match(/secret|sys-1|internal_note|sync_id/);
      expect(record.document).to.deep.equal({
        version: 1,
        mode: 'rich',
        blocks: [
          {
            id: 'b1',
            type: 'paragraph',
            content: [
              { text: 'Hi', marks: ['bold'] },
              { text: 'there', marks: [] },
            ],
          },
        ],
      });
      const base = `/api/media/public/${station.id}`;
      expect(record.media).to.deep.equal([
        {
          assetId: image.assetId,
          versionId: image.versionId,
          kind: 'image',
          url: `${base}/${image.versionId}`,
          credits: 'Photo: Studio',
          mime: 'image/jpeg',
          alt: 'A microphone',
          width: 1600,
          height: 900,
          duration: null,
          variants: {
            thumb: `${base}/${image.versionId}/thumb`,
            display: `${base}/${image.versionId}/display`,
            card: `${base}/${image.versionId}/card`,
            square: `${base}/${image.versionId}/square`,
          },
        },
        {
          assetId: audio.assetId,
          versionId: audio.versionId,
          kind: 'audio',
          url: `${base}/${audio.versionId}`,
          credits: 'Photo: Studio',
          mime: 'audio/mpeg',
          alt: '',
          width: null,
          height: null,
          duration: 182.5,
          variants: { thumb: null, display: null, card: null, square: null },
        },
      ]);
      expect(record.related).to.deep.equal({ programIds: [programId] });
      const mediaRows = await server.svc.db('published_media').where({ record_id: id }).pluck('version_id');
      expect(mediaRows).to.have.members([image.versionId, audio.versionId]);
    });

    it('a later draft never leaks; republishing moves publishedAt and keeps firstPublishedAt', async () => {
      const { station, get } = await contentFixture(server);
      const id = await published(server.url, station.id, 'news', { title: 'First' });
      const first = (await get(`/content/${id}`)).body;
      clock.advance(60_000);
      expect((await putRecord(server.url, station.id, id, { type: 'news', values: { title: 'Draft' } })).body.revision).to.equal(2);
      expect((await get(`/content/${id}`)).body).to.deep.equal(first);
      const again = await publish(server.url, station.id, id);
      expect(again.body).to.deep.include({ revision: 2, publishedAt: clock.now().toISOString() });
      const second = (await get(`/content/${id}`)).body;
      expect(second.values.title).to.equal('Draft');
      expect(second.firstPublishedAt).to.equal(first.firstPublishedAt);
      expect(second.publishedAt).to.equal(clock.now().toISOString()).and.not.equal(first.publishedAt);
      expect(second.publicationId).not.to.equal(first.publicationId);
      clock.advance(60_000);
      const rollback = await publish(server.url, station.id, id, 1);
      expect(rollback.body.revision).to.equal(1);
      expect((await get(`/content/${id}`)).body.values.title, 'an older revision can be published again').to.equal('First');
      expect((await publish(server.url, station.id, id, 3)).status).to.equal(409);
    });

    it('republishing the published revision (no body needed) is a new publication: publishedAt moves, the feed row is upserted again', async () => {
      const { station, get } = await contentFixture(server);
      const id = await published(server.url, station.id, 'news', { title: 'Again' });
      const first = (await get(`/content/${id}`)).body;
      const seq = async () =>
        (await server.svc.db('feed_rows').where({ station_id: station.id, kind: 'content', entry: id }).first()).seq as number;
      const seqBefore = await seq();
      clock.advance(30_000);
      const res = await request(server.url, 'POST', `/admin/v1/stations/${station.id}/records/${id}/publish`, { token: ADMIN_TOKEN });
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      expect(res.body).to.deep.equal({ id, revision: 1, publishedAt: clock.now().toISOString() });
      const second = (await get(`/content/${id}`)).body;
      expect(second).to.include({ revision: 1, firstPublishedAt: first.firstPublishedAt, publishedAt: clock.now().toISOString() });
      expect(second.publicationId).not.to.equal(first.publicationId);
      expect(await seq()).to.be.greaterThan(seqBefore);
    });

    it('unpublish applies on the next read and republishing keeps firstPublishedAt; DELETE removes the record', async () => {
      const { station, get } = await contentFixture(server);
      const id = await published(server.url, station.id, 'news', { title: 'Gone soon', slug: 'gone-soon' });
      const first = (await get(`/content/${id}`)).body;
      const unpub = await admin(server.url, 'POST', `/stations/${station.id}/records/${id}/unpublish`);
      expect(unpub.status).to.equal(200);
      expect((await get(`/content/${id}`)).status).to.equal(404);
      expect((await get('/content/news/by-slug/gone-soon')).status).to.equal(404);
      expect((await get('/content?type=news')).body.records).to.deep.equal([]);
      expect((await admin(server.url, 'POST', `/stations/${station.id}/records/${id}/unpublish`)).status, 'idempotent').to.equal(200);
      clock.advance(1000);
      await publish(server.url, station.id, id);
      const back = (await get(`/content/${id}`)).body;
      expect(back.firstPublishedAt).to.equal(first.firstPublishedAt);
      expect(back.publishedAt).to.equal(clock.now().toISOString());
      expect((await admin(server.url, 'DELETE', `/stations/${station.id}/records/${id}`)).status).to.equal(204);
      expect((await get(`/content/${id}`)).status).to.equal(404);
      expect((await get('/content/news/by-slug/gone-soon')).status).to.equal(404);
      const tombstone = await server.svc.db('feed_rows').where({ station_id: station.id, kind: 'content', entry: id }).first();
      expect(tombstone, 'the feed row of a deleted record is removed').to.include({ deleted: true, data: null });
      expect(await server.svc.db('records').where({ id }).first()).to.equal(undefined);
      expect((await admin(server.url, 'DELETE', `/stations/${station.id}/records/${id}`)).status).to.equal(204);
      expect((await publish(server.url, station.id, id)).status).to.equal(404);
    });

    it('publish, republish and unpublish keep the `content` feed row in step (data = the listener record)', async () => {
      const { station, get } = await contentFixture(server);
      const image = await insertMedia(server, station.id);
      const row = (id: string) => server.svc.db('feed_rows').where({ station_id: station.id, kind: 'content', entry: id }).first();
      const id = await published(
        server.url,
        station.id,
        'news',
        { title: 'Feed me', internal_note: 'hidden' },
        { media: [{ versionId: image.versionId }] },
      );
      let feed = await row(id);
      expect(feed.deleted).to.equal(false);
      expect(feed.data).to.deep.equal((await get(`/content/${id}`)).body);
      await putRecord(server.url, station.id, id, { type: 'news', values: { title: 'Fed' } });
      await publish(server.url, station.id, id);
      feed = await row(id);
      expect(feed.data.values).to.deep.equal({ title: 'Fed' });
      expect(feed.data).to.deep.equal((await get(`/content/${id}`)).body);
      expect(await server.svc.db('published_media').where({ record_id: id }).count('* as n').first()).to.deep.equal({ n: 0 });
      await admin(server.url, 'POST', `/stations/${station.id}/records/${id}/unpublish`);
      feed = await row(id);
      expect(feed).to.include({ deleted: true, data: null });
    });

    it('an image has its variant paths from the first delivery; a record stored before that rule (null variants) gets them when re-presented', async () => {
      const { station, get } = await contentFixture(server);
      const image = await insertMedia(server, station.id);
      const id = await published(server.url, station.id, 'news', { title: 'Pic' }, { media: [{ versionId: image.versionId }] });
      expect((await get(`/content/${id}`)).body.media[0].variants.card).to.equal(`/api/media/public/${station.id}/${image.versionId}/card`);
      expect(await refreshRecordsUsingMedia(server.svc, station.id, image.versionId), 'nothing to re-present').to.equal(0);
      await storeWithNullVariants(server, id);
      expect((await get(`/content/${id}`)).body.media[0].variants.card).to.equal(null);
      expect(await refreshRecordsUsingMedia(server.svc, station.id, image.versionId)).to.equal(1);
      expect((await get(`/content/${id}`)).body.media[0].variants.card).to.equal(`/api/media/public/${station.id}/${image.versionId}/card`);
      expect(await refreshRecordsUsingMedia(server.svc, station.id, image.versionId), 'nothing changed').to.equal(0);
    });
  });
});
