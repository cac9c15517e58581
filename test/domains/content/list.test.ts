import { expect } from 'chai';
import { refreshRecordsUsingMedia } from '../../../src/domains/content/publish.ts';
import { useClockedServer } from '../../support/server.ts';
import { NEWS_FIELDS, contentFixture, insertMedia, listPath, published, putType, storeWithNullVariants, walk } from './helpers.ts';

interface Published {
  id: string;
  at: number;
}

/** Expected order: the sort value, then the id, both in the requested direction. */
function ordered(items: Published[], direction: 'asc' | 'desc'): string[] {
  const ascending = [...items].sort((a, b) => (a.at !== b.at ? a.at - b.at : a.id < b.id ? -1 : 1)).map((i) => i.id);
  return direction === 'asc' ? ascending : ascending.reverse();
}

describe('GET …/content: order, filters and cursors', () => {
  const { clock, server } = useClockedServer('2026-11-21T08:00:00.000Z');

  /** Publishes `count` records, advancing the clock before every `tieEvery`-th so some share a timestamp. */
  async function publishMany(
    stationId: string,
    count: number,
    tieEvery = 3,
    values: (i: number) => Record<string, unknown> = (i) => ({ title: `Item ${i}` }),
  ): Promise<Published[]> {
    const items: Published[] = [];
    for (let i = 0; i < count; i++) {
      if (i % tieEvery === 0) clock.advance(1000);
      const id = await published(server.url, stationId, 'news', values(i));
      items.push({ id, at: clock.now().getTime() });
    }
    return items;
  }

  it('orders by publishedAt and updatedAt, desc (default) and asc, ties broken by id', async () => {
    const { station, get } = await contentFixture(server);
    const image = await insertMedia(server, station.id);
    const items: Published[] = [];
    for (let i = 0; i < 7; i++) {
      if (i % 2 === 0) clock.advance(1000);
      const media = i === 3 ? [{ versionId: image.versionId }] : [];
      items.push({ id: await published(server.url, station.id, 'news', { title: `Item ${i}` }, { media }), at: clock.now().getTime() });
    }
    // Re-presenting record 3 (stored before variants were always paths) moves its updatedAt, not its publishedAt.
    clock.advance(5000);
    await storeWithNullVariants(server, items[3].id);
    expect(await refreshRecordsUsingMedia(server.svc, station.id, image.versionId)).to.equal(1);
    const byPublished = items;
    const byUpdated = items.map((item, i) => (i === 3 ? { id: item.id, at: clock.now().getTime() } : item));
    const ids = async (query: string) => (await get(`/content?type=news&${query}`)).body.records.map((r: { id: string }) => r.id);
    expect(await ids('')).to.deep.equal(ordered(byPublished, 'desc'));
    expect(await ids('sort=publishedAt&direction=desc')).to.deep.equal(ordered(byPublished, 'desc'));
    expect(await ids('sort=publishedAt&direction=asc')).to.deep.equal(ordered(byPublished, 'asc'));
    expect(await ids('sort=updatedAt&direction=desc')).to.deep.equal(ordered(byUpdated, 'desc'));
    expect(await ids('sort=updatedAt&direction=asc')).to.deep.equal(ordered(byUpdated, 'asc'));
    expect(ordered(byUpdated, 'desc')[0]).to.equal(items[3].id);
    expect(ordered(byPublished, 'desc')[0]).not.to.equal(items[3].id);
    const ties = await ids('sort=publishedAt&direction=asc');
    expect(ties.slice(0, 2), 'records 0 and 1 share a timestamp: ordered by id').to.deep.equal([items[0].id, items[1].id].sort());
  });

  it('the list response has contractVersion, type, records, nextCursor and page {limit, nextCursor}; an unknown type is an empty page', async () => {
    const { station, get } = await contentFixture(server);
    await publishMany(station.id, 3);
    const res = await get('/content?type=news&limit=2');
    expect(res.status).to.equal(200);
    expect(Object.keys(res.body)).to.have.members(['contractVersion', 'type', 'records', 'nextCursor', 'page']);
    expect(res.body).to.include({ contractVersion: 1, type: 'news' });
    expect(res.body.records).to.have.length(2);
    expect(res.body.page).to.deep.equal({ limit: 2, nextCursor: res.body.nextCursor });
    expect(res.body.records[0]).to.include({ contractVersion: 1, type: 'news' });
    const defaults = await get('/content?type=news');
    expect(defaults.body.page).to.deep.equal({ limit: 25, nextCursor: null });
    const unknown = await get('/content?type=nothing_here');
    expect(unknown.status).to.equal(200);
    expect(unknown.body).to.deep.equal({
      contractVersion: 1,
      type: 'nothing_here',
      records: [],
      nextCursor: null,
      page: { limit: 25, nextCursor: null },
    });
    const filtered = await get('/content?type=nothing_here&filter=title:x');
    expect(filtered.status).to.equal(404);
    expect(filtered.body.error.code).to.equal('NOT_FOUND');
  });

  describe('filters', () => {
    let get: Awaited<ReturnType<typeof contentFixture>>['get'];
    const ids: Record<string, string> = {};
    before(async () => {
      const fixture = await contentFixture(server);
      get = fixture.get;
      const rows: Array<[string, Record<string, unknown>]> = [
        ['jazz', { title: 'Jazz Night at the Harbour', category: 'music', tags: ['live', 'festival'] }],
        ['council', { title: 'City council votes', category: 'local', tags: ['interview'] }],
        ['derby', { title: 'Derby day', category: 'sport', tags: ['live'] }],
        ['studio', { title: 'In the studio: 100% vinyl_', category: 'music', tags: ['studio'] }],
        ['plain', { title: 'No tags here', internal_note: 'jazz' }],
      ];
      for (const [name, values] of rows) {
        clock.advance(1000);
        ids[name] = await published(server.url, fixture.station.id, 'news', values);
      }
    });
    const names = async (filters: string[]) => {
      const res = await get(listPath({ type: 'news', direction: 'asc' }, filters));
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      return res.body.records.map((r: { id: string }) => Object.keys(ids).find((k) => ids[k] === r.id));
    };

    it('field:value is an exact match on text and choices fields', async () => {
      expect(await names(['category:music'])).to.deep.equal(['jazz', 'studio']);
      expect(await names(['title:Derby day'])).to.deep.equal(['derby']);
      expect(await names(['title:derby day']), 'exact is case-sensitive').to.deep.equal([]);
    });

    it('field.contains:value is a case-insensitive substring match; % and _ are literal', async () => {
      expect(await names(['title.contains:JAZZ'])).to.deep.equal(['jazz']);
      expect(await names(['title.contains:the'])).to.deep.equal(['jazz', 'studio']);
      expect(await names(['title.contains:100%'])).to.deep.equal(['studio']);
      expect(await names(['title.contains:l_'])).to.deep.equal(['studio']);
    });

    it('field.anyOf:a,b matches any listed value', async () => {
      expect(await names(['category.anyOf:local,sport'])).to.deep.equal(['council', 'derby']);
    });

    it('on a multiple choices field each form matches when any chosen key matches', async () => {
      expect(await names(['tags:live'])).to.deep.equal(['jazz', 'derby']);
      expect(await names(['tags.anyOf:studio,interview'])).to.deep.equal(['council', 'studio']);
      expect(await names(['tags.contains:VAL'])).to.deep.equal(['jazz']);
    });

    it('all filters must match', async () => {
      expect(await names(['tags:live', 'category:music'])).to.deep.equal(['jazz']);
      expect(await names(['tags:live', 'category:local'])).to.deep.equal([]);
    });

    it('only delivered text and choices fields: others are 400 with the closest filterable field as suggestion', async () => {
      for (const [filter, suggestion] of [
        ['rating:4', 'title'],
        ['internal_note:jazz', 'title'],
        ['summary.contains:x', 'slug'],
        ['categroy:music', 'category'],
        ['sync_id:x', 'slug'],
      ]) {
        const res = await get(listPath({ type: 'news' }, [filter]));
        expect(res.status, filter).to.equal(400);
        expect(res.body.error.issues[0]).to.include({ path: 'filter' });
        expect(res.body.error.issues[0].suggestion, filter).to.equal(suggestion);
      }
      const priv = await get(listPath({ type: 'news' }, ['internal_note:jazz']));
      const unknown = await get(listPath({ type: 'news' }, ['internal_notes:jazz']));
      expect(priv.body.error.issues[0].message.replace('internal_note', 'X')).to.equal(
        unknown.body.error.issues[0].message.replace('internal_notes', 'X'),
      );
    });

    it("a value that is not one of a choices field's keys matches nothing (200, empty page), not an error", async () => {
      expect(await names(['category:musik'])).to.deep.equal([]);
      expect(await names(['tags:Live'])).to.deep.equal([]);
      expect(await names(['category.anyOf:local,sprot']), 'known keys of an anyOf still match').to.deep.equal(['council']);
      expect(await names(['category.contains:usi'])).to.deep.equal(['jazz', 'studio']);
    });

    it('a retired choice key matches nothing, even on a record that still holds it (200, empty page)', async () => {
      const own = await contentFixture(server);
      const old = await published(server.url, own.station.id, 'news', { title: 'Old match', category: 'sport' });
      const current = await published(server.url, own.station.id, 'news', { title: 'Concert', category: 'music' });
      expect((await own.get(listPath({ type: 'news' }, ['category:sport']))).body.records.map((r: { id: string }) => r.id)).to.deep.equal([
        old,
      ]);
      const retired = NEWS_FIELDS.map((f) =>
        f.key === 'category' ? { ...f, choices: (f.choices ?? []).filter((c) => c.key !== 'sport') } : f,
      );
      expect((await putType(server.url, own.station.id, 'news', retired)).body.version).to.equal(2);
      const res = await own.get(listPath({ type: 'news' }, ['category:sport']));
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      expect(res.body).to.deep.include({ records: [], nextCursor: null });
      expect(
        (await own.get(listPath({ type: 'news' }, ['category.anyOf:sport,music']))).body.records.map((r: { id: string }) => r.id),
        'an anyOf keeps its current keys',
      ).to.deep.equal([current]);
      expect((await own.get(`/content/${old}`)).body.values.category, 'the record keeps its retired key').to.equal('sport');
    });
  });

  describe('cursors', () => {
    let fixture: Awaited<ReturnType<typeof contentFixture>>;
    let items: Published[];
    before(async () => {
      fixture = await contentFixture(server);
      items = await publishMany(fixture.station.id, 120, 4, (i) => ({ title: `Item ${i}`, category: i % 2 ? 'music' : 'local' }));
    });

    it('walks 120 records in every sort and direction without duplicates or gaps', async () => {
      for (const direction of ['desc', 'asc'] as const) {
        for (const sort of ['publishedAt', 'updatedAt']) {
          for (const limit of [7, 50]) {
            const seen = await walk(fixture.get, { type: 'news', sort, direction, limit });
            expect(seen, `${sort} ${direction} ${limit}`).to.deep.equal(ordered(items, direction));
          }
        }
      }
      const music = await walk(fixture.get, { type: 'news', limit: 9 }, ['category:music']);
      expect(music).to.deep.equal(
        ordered(
          items.filter((_, i) => i % 2 === 1),
          'desc',
        ),
      );
    });

    it('a cursor is bound to type, filters, sort and direction (400 otherwise) but not to limit; a tampered one is 400', async () => {
      const { station, get } = fixture;
      await putType(server.url, station.id, 'show', [{ key: 'title', label: 'T', kind: 'text' }]);
      const first = await get(listPath({ type: 'news', limit: 5 }, ['category:music', 'title.contains:item']));
      const cursor: string = first.body.nextCursor;
      const expect400 = async (params: Record<string, string | number>, filters: string[]) => {
        const res = await get(listPath({ type: 'news', limit: 5, cursor, ...params }, filters));
        expect(res.status, JSON.stringify(params) + filters.join('&')).to.equal(400);
        expect(res.body.error.issues[0].path).to.equal('cursor');
      };
      await expect400({ type: 'show' }, ['title:x']);
      await expect400({}, ['category:music']);
      await expect400({}, ['category:local', 'title.contains:item']);
      await expect400({ sort: 'updatedAt' }, ['category:music', 'title.contains:item']);
      await expect400({ direction: 'asc' }, ['category:music', 'title.contains:item']);
      const reordered = await get(listPath({ type: 'news', limit: 3, cursor }, ['title.contains:item', 'category:music']));
      expect(reordered.status, 'filter order and limit do not matter').to.equal(200);
      expect(reordered.body.records[0].id).to.equal(
        ordered(
          items.filter((_, i) => i % 2 === 1),
          'desc',
        )[5],
      );
      const [body, mac] = cursor.split('.');
      const payload = JSON.parse(Buffer.from(body, 'base64url').toString());
      const forged = `${Buffer.from(JSON.stringify({ ...payload, a: payload.a + 1 })).toString('base64url')}.${mac}`;
      for (const bad of [forged, `${cursor.slice(0, -1)}${cursor.endsWith('A') ? 'B' : 'A'}`, 'not-a-cursor']) {
        const res = await get(listPath({ type: 'news', limit: 5, cursor: bad }, ['category:music', 'title.contains:item']));
        expect(res.status).to.equal(400);
        expect(res.body.error.issues[0].path).to.equal('cursor');
      }
      const otherStation = await contentFixture(server);
      await published(server.url, otherStation.station.id, 'news', { title: 'x', category: 'music' });
      const elsewhere = await otherStation.get(listPath({ type: 'news', limit: 5, cursor }, ['category:music', 'title.contains:item']));
      expect(elsewhere.status, 'a cursor of another station').to.equal(400);
    });

    it('publishing while a listener pages neither repeats nor skips a record published before the first page', async () => {
      const { station, get } = fixture;
      for (const direction of ['desc', 'asc'] as const) {
        const before = ordered(items, direction);
        let published_ = 0;
        // Between pages (and concurrently with the reads) new records are published, some at the very
        // timestamp of the records being paged.
        const seen = await walk(get, { type: 'news', direction, limit: 11 }, [], async (page) => {
          if (page % 2 === 0) clock.advance(1000);
          await Promise.all([0, 1].map(() => published(server.url, station.id, 'news', { title: `New ${published_++}` })));
        });
        expect(new Set(seen).size, 'no record twice').to.equal(seen.length);
        const old = seen.filter((id) => before.includes(id));
        expect(old, direction).to.deep.equal(before);
      }
      const concurrent = await Promise.all([
        walk(get, { type: 'news', limit: 13 }),
        (async () => {
          for (let i = 0; i < 10; i++) await published(server.url, station.id, 'news', { title: `Racing ${i}` });
        })(),
      ]);
      const seen = concurrent[0];
      expect(new Set(seen).size).to.equal(seen.length);
      for (const item of items) expect(seen).to.include(item.id);
    });
  });

  describe('bad input is 400 with issues naming the parameter (and a suggestion where one is close)', () => {
    let get: Awaited<ReturnType<typeof contentFixture>>['get'];
    before(async () => {
      get = (await contentFixture(server)).get;
    });
    const cases: Array<[string, string, string | number | undefined]> = [
      ['/content?type=news&limit=0', 'limit', 1],
      ['/content?type=news&limit=51', 'limit', 50],
      ['/content?type=news&limit=ten', 'limit', undefined],
      [`/content?type=news&${Array.from({ length: 11 }, (_, i) => `filter=title:${i}`).join('&')}`, 'filter', undefined],
      [`/content?type=news&cursor=${'a'.repeat(401)}`, 'cursor', undefined],
      ['/content?type=news&cursor=', 'cursor', undefined],
      ['/content?type=news&filter=title', 'filter', undefined],
      ['/content?type=news&filter=title:', 'filter', undefined],
      ['/content?type=news&filter=title.anyOf:a,,b', 'filter', undefined],
      ['/content?type=news&filter=title.anyof:a,b', 'filter', 'title.anyOf:a,b'],
      ['/content?type=news&filter=title.contain:a', 'filter', 'title.contains:a'],
      ['/content?type=news&filter=Title:a', 'filter', 'title:a'],
      ['/content?type=news&sort=published', 'sort', 'publishedAt'],
      ['/content?type=news&sort=createdAt', 'sort', undefined],
      ['/content?type=news&direction=DESC', 'direction', 'desc'],
      ['/content?type=News', 'type', 'news'],
      ['/content?type=9news', 'type', undefined],
      ['/content', 'type', undefined],
      ['/content?type=news&filters=title:a', 'filters', 'filter'],
      ['/content/not-a-uuid', 'id', undefined],
      ['/content/News/by-slug/x', 'type', 'news'],
      [`/content/news/by-slug/${'s'.repeat(201)}`, 'slug', undefined],
    ];
    for (const [path, parameter, suggestion] of cases) {
      it(`${path.slice(0, 80)} → 400 naming ${parameter}`, async () => {
        const res = await get(path);
        expect(res.status).to.equal(400);
        expect(res.body.error.code).to.equal('VALIDATION_ERROR');
        const issue = res.body.error.issues.find((i: { path: string }) => i.path === parameter);
        expect(issue, JSON.stringify(res.body)).to.be.an('object');
        if (suggestion !== undefined) expect(issue.suggestion).to.equal(suggestion);
      });
    }
  });

  it('answers 304 to If-None-Match on a list page, and a new ETag once the list changes', async () => {
    const { station, get } = await contentFixture(server);
    await publishMany(station.id, 2);
    const first = await get('/content?type=news');
    const etag = first.headers.get('etag') as string;
    expect(etag).to.match(/^"[0-9a-f]{64}"$/);
    expect((await get('/content?type=news', { 'if-none-match': etag })).status).to.equal(304);
    await published(server.url, station.id, 'news', { title: 'Newer' });
    expect((await get('/content?type=news', { 'if-none-match': etag })).status).to.equal(200);
  });
});
