import { expect } from 'chai';
import { sharedServer, type TestServer } from '../../support/server.ts';
import { admin, request } from '../../support/http.ts';
import { createStation } from '../../support/factories.ts';
import { NEWS_FIELDS, contentFixture, published, putType } from './helpers.ts';

describe('content types: PUT /admin/v1/stations/{id}/content-types/{key} and GET …/schemas', () => {
  let server: TestServer;
  before(async () => {
    server = await sharedServer();
  });

  describe('admin definitions', () => {
    it('a changed field list makes a new version; the same list, a label or archived change keeps it', async () => {
      const station = await createStation(server.url);
      expect((await putType(server.url, station.id, 'news')).body).to.deep.equal({ key: 'news', version: 1 });
      expect((await putType(server.url, station.id, 'news')).body.version, 'same fields').to.equal(1);
      expect(
        (
          await admin(server.url, 'PUT', `/stations/${station.id}/content-types/news`, {
            label: 'Stories',
            fields: NEWS_FIELDS,
            archived: true,
          })
        ).body.version,
      ).to.equal(1);
      const changed = NEWS_FIELDS.map((f) => (f.key === 'title' ? { ...f, maxLength: 200 } : f));
      expect((await putType(server.url, station.id, 'news', changed)).body.version).to.equal(2);
      const privateToo = changed.map((f) => (f.key === 'summary' ? { ...f, private: true } : f));
      expect((await putType(server.url, station.id, 'news', privateToo)).body.version, 'a flag is part of the field list').to.equal(3);
    });

    it('validates field definitions: key pattern, kind (with suggestion), unknown properties', async () => {
      const station = await createStation(server.url);
      const res = await putType(server.url, station.id, 'news', [
        { key: 'Title', label: 'T', kind: 'text' },
        { key: 'body', label: 'B', kind: 'txt' },
        { key: 'x', label: 'X', kind: 'text', colour: 'red' },
      ]);
      expect(res.status).to.equal(400);
      expect(res.body.error.code).to.equal('VALIDATION_ERROR');
      const paths = res.body.error.issues.map((i: { path: string }) => i.path);
      expect(paths).to.include.members(['fields.0.key', 'fields.1.kind', 'fields.2.colour']);
      expect(res.body.error.issues.find((i: { path: string }) => i.path === 'fields.1.kind').suggestion).to.equal('text');
    });

    it('validates kind rules: choices need choices with valid unique keys, content needs targetType, group needs nested fields', async () => {
      const station = await createStation(server.url);
      const cases: Array<[unknown, string]> = [
        [{ key: 'c', label: 'C', kind: 'choices' }, 'fields.0.choices'],
        [{ key: 'c', label: 'C', kind: 'choices', choices: [{ key: 'Bad Key', label: 'x' }] }, 'fields.0.choices.0.key'],
        [
          {
            key: 'c',
            label: 'C',
            kind: 'choices',
            choices: [
              { key: 'a', label: 'A' },
              { key: 'a', label: 'A2' },
            ],
          },
          'fields.0.choices.1.key',
        ],
        [{ key: 'r', label: 'R', kind: 'content' }, 'fields.0.targetType'],
        [{ key: 'r', label: 'R', kind: 'content', targetType: 'Not-A-Key' }, 'fields.0.targetType'],
        [{ key: 't', label: 'T', kind: 'text', targetType: 'news' }, 'fields.0.targetType'],
        [{ key: 'g', label: 'G', kind: 'group' }, 'fields.0.fields'],
        [{ key: 'g', label: 'G', kind: 'group', fields: [{ key: 'In-Valid', label: 'x', kind: 'text' }] }, 'fields.0.fields.0.key'],
        [
          {
            key: 'g',
            label: 'G',
            kind: 'group',
            fields: [
              { key: 'a', label: 'x', kind: 'text' },
              { key: 'a', label: 'y', kind: 'text' },
            ],
          },
          'fields.0.fields.1.key',
        ],
        [{ key: 'n', label: 'N', kind: 'number', min: 5, max: 1 }, 'fields.0.min'],
        [{ key: 'n', label: 'N', kind: 'text', multiple: true }, 'fields.0.multiple'],
        [{ key: 'n', label: 'N', kind: 'choices', choices: [{ key: 'a', label: 'A' }], maxItems: 2 }, 'fields.0.maxItems'],
        [{ key: 'n', label: 'N', kind: 'boolean', maxLength: 3 }, 'fields.0.maxLength'],
      ];
      for (const [field, path] of cases) {
        const res = await putType(server.url, station.id, 'bad', [field]);
        expect(res.status, JSON.stringify(field)).to.equal(400);
        expect(
          res.body.error.issues.map((i: { path: string }) => i.path),
          JSON.stringify(res.body),
        ).to.include(path);
      }
      const dup = await putType(server.url, station.id, 'bad', [
        { key: 'a', label: 'A', kind: 'text' },
        { key: 'a', label: 'B', kind: 'text' },
      ]);
      expect(dup.body.error.issues[0].path).to.equal('fields.1.key');
    });

    it('maxItems on a media, content or group field makes it repeated: multiple: true is implied (and may be given)', async () => {
      const { station, get } = await contentFixture(server);
      const fields = [
        { key: 'photos', label: 'Photos', kind: 'media', maxItems: 4 },
        { key: 'links', label: 'Links', kind: 'content', targetType: 'news', maxItems: 2 },
        { key: 'credits', label: 'Credits', kind: 'group', maxItems: 3, fields: [{ key: 'name', label: 'Name', kind: 'text' }] },
        { key: 'extra', label: 'Extra', kind: 'media', multiple: true, maxItems: 5 },
      ];
      const res = await putType(server.url, station.id, 'gallery', fields);
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      const gallery = (await get('/schemas')).body.types.find((t: { key: string }) => t.key === 'gallery');
      for (const key of ['photos', 'links', 'credits', 'extra']) {
        expect(
          gallery.fields.find((f: { key: string }) => f.key === key),
          key,
        ).to.include({ multiple: true });
      }
      const single = await putType(server.url, station.id, 'bad', [{ key: 'p', label: 'P', kind: 'media', multiple: false, maxItems: 2 }]);
      expect(single.status, 'multiple: false contradicts maxItems').to.equal(400);
      expect(single.body.error.issues.map((i: { path: string }) => i.path)).to.include('fields.0.maxItems');
    });

    it('accepts multiple: false on any kind (`multiple` is among every field definition’s properties); it changes nothing', async () => {
      const { station, get } = await contentFixture(server);
      const plain = [
        { key: 'title', label: 'Title', kind: 'text', required: true },
        { key: 'score', label: 'Score', kind: 'number' },
      ];
      const first = await putType(server.url, station.id, 'flags', plain);
      expect(first.status).to.equal(200);
      const explicit = await putType(
        server.url,
        station.id,
        'flags',
        plain.map((field) => ({ ...field, multiple: false })),
      );
      expect(explicit.status, JSON.stringify(explicit.body)).to.equal(200);
      expect(explicit.body).to.deep.equal(first.body);
      const flags = (await get('/schemas?type=flags')).body.types[0];
      expect(flags.fields.map((f: Record<string, unknown>) => 'multiple' in f)).to.deep.equal([false, false]);
    });

    it('the type key in the path must match the key pattern; unknown station 404; operator token required', async () => {
      const station = await createStation(server.url);
      const bad = await putType(server.url, station.id, 'News');
      expect(bad.status).to.equal(400);
      expect(bad.body.error.issues[0]).to.include({ path: 'key', suggestion: 'news' });
      expect((await putType(server.url, 'st_unknown', 'news')).status).to.equal(404);
      const anon = await request(server.url, 'PUT', `/admin/v1/stations/${station.id}/content-types/news`, {
        json: { label: 'x', fields: [] },
      });
      expect(anon.status).to.equal(401);
    });
  });

  describe('GET …/schemas', () => {
    it('lists every current type ordered by key, with private and system fields (and flags) left out at every level', async () => {
      const { station, get } = await contentFixture(server);
      await putType(
        server.url,
        station.id,
        'episode',
        [
          { key: 'title', label: 'Title', kind: 'text', required: true },
          {
            key: 'credits',
            label: 'Credits',
            kind: 'group',
            multiple: true,
            maxItems: 5,
            fields: [
              { key: 'name', label: 'Name', kind: 'text' },
              { key: 'fee', label: 'Fee', kind: 'number', private: true },
            ],
          },
          { key: 'presenter', label: 'Presenter', kind: 'content', targetType: 'presenter' },
          { key: 'audit', label: 'Audit', kind: 'datetime', system: true },
        ],
        { archived: true },
      );
      const res = await get('/schemas');
      expect(res.status).to.equal(200);
      expect(res.body.contractVersion).to.equal(1);
      expect(res.body.types.map((t: { key: string }) => t.key)).to.deep.equal(['episode', 'news']);
      const [episode, news] = res.body.types;
      expect(episode).to.deep.equal({
        key: 'episode',
        label: 'EPISODE',
        version: 1,
        archived: true,
        fields: [
          { key: 'title', label: 'Title', kind: 'text', required: true },
          {
            key: 'credits',
            label: 'Credits',
            kind: 'group',
            required: false,
            multiple: true,
            maxItems: 5,
            fields: [{ key: 'name', label: 'Name', kind: 'text', required: false }],
          },
          { key: 'presenter', label: 'Presenter', kind: 'content', required: false, multiple: false, targetType: 'presenter' },
        ],
      });
      expect(news.archived).to.equal(false);
      expect(news.fields.map((f: { key: string }) => f.key)).to.deep.equal([
        'title',
        'slug',
        'summary',
        'category',
        'tags',
        'rating',
        'featured',
        'event_at',
      ]);
      expect(JSON.stringify(res.body)).not.to.match(/internal_note|sync_id|"private"|"system"/);
      expect(news.fields.find((f: { key: string }) => f.key === 'tags')).to.deep.include({ kind: 'choices', multiple: true, maxItems: 3 });
      expect(news.fields.find((f: { key: string }) => f.key === 'rating')).to.deep.include({ min: 0, max: 5 });
    });

    it('type selects one type; unknown type 404; version without type 400', async () => {
      const { get } = await contentFixture(server);
      const one = await get('/schemas?type=news');
      expect(one.status).to.equal(200);
      expect(one.body.types).to.have.length(1);
      expect(one.body.types[0]).to.include({ key: 'news', version: 1 });
      expect((await get('/schemas?type=nope')).status).to.equal(404);
      const bad = await get('/schemas?version=1');
      expect(bad.status).to.equal(400);
      expect(bad.body.error.issues[0].path).to.equal('version');
      const zero = await get('/schemas?type=news&version=0');
      expect(zero.status).to.equal(400);
      expect(zero.body.error.issues[0].path).to.equal('version');
      expect((await get('/schemas?type=News')).status).to.equal(400);
    });

    it('a version beyond any stored one is an integer > 0 like the rest: 404 NOT_FOUND, not a storage error', async () => {
      const { get } = await contentFixture(server);
      for (const version of ['2147483648', '9007199254740993', '99999999999999999999']) {
        const res = await get(`/schemas?type=news&version=${version}`);
        expect(res.status, `version=${version}: ${res.text}`).to.equal(404);
        expect(res.body.error.code).to.equal('NOT_FOUND');
      }
    });

    it('a historical version is delivered only once a record was published with it', async () => {
      const { station, get } = await contentFixture(server);
      const v2Fields = [...NEWS_FIELDS, { key: 'subtitle', label: 'Subtitle', kind: 'text' }];
      expect((await putType(server.url, station.id, 'news', v2Fields)).body.version).to.equal(2);
      expect((await get('/schemas?type=news&version=1')).status, 'v1 never published').to.equal(404);
      expect((await get('/schemas?type=news&version=2')).status, 'the current version').to.equal(200);
      expect((await get('/schemas?type=news&version=3')).status).to.equal(404);
      await published(server.url, station.id, 'news', { title: 'Under v2' });
      const v3Fields = [...v2Fields, { key: 'byline', label: 'Byline', kind: 'text' }];
      expect((await putType(server.url, station.id, 'news', v3Fields)).body.version).to.equal(3);
      const v2 = await get('/schemas?type=news&version=2');
      expect(v2.status).to.equal(200);
      expect(v2.body.types[0].version).to.equal(2);
      expect(v2.body.types[0].fields.map((f: { key: string }) => f.key))
        .to.include('subtitle')
        .and.not.include('byline');
      expect((await get('/schemas?type=news')).body.types[0].version).to.equal(3);
      expect((await get('/schemas?type=news&version=1')).status).to.equal(404);
    });

    it('answers 304 to If-None-Match with the current ETag, and a new ETag after a change', async () => {
      const { station, get } = await contentFixture(server);
      const first = await get('/schemas');
      const etag = first.headers.get('etag') as string;
      expect(etag).to.match(/^"[0-9a-f]{64}"$/);
      expect(first.headers.get('cache-control')).to.equal('no-store');
      const again = await get('/schemas', { 'if-none-match': etag });
      expect(again.status).to.equal(304);
      expect(again.text).to.equal('');
      await putType(server.url, station.id, 'show', [{ key: 'title', label: 'T', kind: 'text' }]);
      expect((await get('/schemas', { 'if-none-match': etag })).status).to.equal(200);
    });

    it('the schemas module switch applies on the next read (404 MODULE_DISABLED)', async () => {
      const { station, get } = await contentFixture(server);
      await admin(server.url, 'PATCH', `/stations/${station.id}`, { modules: { schemas: false } });
      const res = await get('/schemas');
      expect(res.status).to.equal(404);
      expect(res.body.error.code).to.equal('MODULE_DISABLED');
      await admin(server.url, 'PATCH', `/stations/${station.id}`, { modules: { schemas: true } });
      expect((await get('/schemas')).status).to.equal(200);
    });
  });
});
