import { expect } from 'chai';
import { refreshRecordsUsingMedia } from '../../../src/domains/content/publish.ts';
import { admin, type Reply } from '../../support/http.ts';
import { useClockedServer } from '../../support/server.ts';
import { contentFixture, insertMedia, listPath, publish, published, putRecord, storeWithNullVariants, walk } from './helpers.ts';

// "Paging through a list while records are being published must neither repeat nor skip a record that
// was published before the first page was read" — republications included: a walk is a snapshot of
// the positions at its first page, while every page delivers the records' current bodies.

type Sort = 'publishedAt' | 'updatedAt';
type Direction = 'asc' | 'desc';
interface Tracked {
  title: string;
  category: string;
  publishedAt: number;
  updatedAt: number;
  published: boolean;
  image?: string;
}
interface Delivered {
  id: string;
  values: { title: string };
}

const COMBINATIONS: Array<[Sort, Direction]> = [
  ['publishedAt', 'desc'],
  ['publishedAt', 'asc'],
  ['updatedAt', 'desc'],
  ['updatedAt', 'asc'],
];

/** Published ids in list order (sort value, then id, in the requested direction). */
function ordered(state: Map<string, Tracked>, sort: Sort, direction: Direction): string[] {
  const ascending = [...state.entries()]
    .filter(([, t]) => t.published)
    .sort(([a, x], [b, y]) => (x[sort] !== y[sort] ? x[sort] - y[sort] : a < b ? -1 : 1))
    .map(([id]) => id);
  return direction === 'asc' ? ascending : ascending.reverse();
}

describe('GET …/content: a walk is a snapshot of the positions at its first page', function () {
  this.timeout(60_000); // each walk publishes about a hundred revisions through the admin API
  const { clock, server } = useClockedServer('2026-11-22T08:00:00.000Z');
  let fixture: Awaited<ReturnType<typeof contentFixture>>;
  /** Every record of the fixture as the test last published it. */
  const state = new Map<string, Tracked>();
  const isPublished = (id: string | undefined): id is string => id !== undefined && state.get(id)?.published === true;
  const images = new Map<string, string>(); // media version → record
  let counter = 0;

  /** Publishes a new record (id undefined) or a new revision of one, with a new title. */
  async function publishRecord(id: string | undefined, category: string): Promise<string> {
    const title = `Story ${counter++}`;
    let image = id === undefined ? undefined : state.get(id)?.image;
    if (id === undefined && images.size < 4 && state.size % 30 === 0) image = (await insertMedia(server, fixture.station.id)).versionId;
    const extra = image ? { media: [{ versionId: image }] } : {};
    const recordId = id ?? (await published(server.url, fixture.station.id, 'news', { title, category }, extra));
    if (id !== undefined) {
      const saved = await putRecord(server.url, fixture.station.id, id, { type: 'news', values: { title, category }, ...extra });
      expect(saved.status).to.equal(200);
      expect((await publish(server.url, fixture.station.id, id)).status).to.equal(200);
    }
    if (image) images.set(image, recordId);
    const now = clock.now().getTime();
    state.set(recordId, { title, category, publishedAt: now, updatedAt: now, published: true, image });
    return recordId;
  }
  const republish = (id: string) => publishRecord(id, (state.get(id) as Tracked).category);
  async function unpublish(id: string): Promise<void> {
    expect((await admin(server.url, 'POST', `/stations/${fixture.station.id}/records/${id}/unpublish`)).status).to.equal(200);
    (state.get(id) as Tracked).published = false;
  }
  /** Records stored before variants were always paths are re-presented: their updatedAt moves. */
  async function refreshImages(): Promise<void> {
    for (const [versionId, recordId] of images) {
      if (isPublished(recordId)) await storeWithNullVariants(server, recordId);
      expect(await refreshRecordsUsingMedia(server.svc, fixture.station.id, versionId)).to.equal(isPublished(recordId) ? 1 : 0);
      (state.get(recordId) as Tracked).updatedAt = clock.now().getTime();
    }
  }

  before(async () => {
    fixture = await contentFixture(server);
    for (let i = 0; i < 120; i++) {
      if (i % 3 === 0) clock.advance(1000); // some records share a timestamp
      await publishRecord(undefined, i % 2 ? 'music' : 'local');
    }
    expect(images.size).to.equal(4);
  });

  /** Follows nextCursor to the end; every delivered body must be the record's current one. */
  async function walkRecords(
    params: Record<string, string | number>,
    filters: string[],
    between: (page: number, seen: string[]) => Promise<void>,
  ): Promise<string[]> {
    const seen: string[] = [];
    let cursor: string | undefined;
    for (let page = 0; page < 200; page++) {
      const res: Reply = await fixture.get(listPath({ type: 'news', ...params, cursor }, filters));
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      for (const record of res.body.records as Delivered[]) {
        expect(record.values.title, 'the current body, never a former one').to.equal(state.get(record.id)?.title);
        seen.push(record.id);
      }
      if (res.body.nextCursor === null) return seen;
      expect(res.body.nextCursor.length).to.be.within(1, 400);
      cursor = res.body.nextCursor;
      await between(page, seen);
    }
    throw new Error('walk did not end');
  }

  for (const [sort, direction] of COMBINATIONS) {
    it(`${sort} ${direction}: republishing seen and unseen records and publishing new ones between pages neither repeats nor skips one`, async () => {
      const expected = ordered(state, sort, direction);
      const fresh: string[] = [];
      let gone: string | undefined;
      let returning: string | undefined;
      const seen = await walkRecords({ sort, direction, limit: 7 }, [], async (page, sofar) => {
        if (page % 2 === 0) clock.advance(1000); // otherwise the moves land on the timestamp of others
        const unseen = expected.filter((id) => !sofar.includes(id) && isPublished(id));
        // The next record to come and the last one, the last record seen and the first one.
        for (const id of new Set([unseen[0], unseen[unseen.length - 1], sofar[sofar.length - 1], sofar[0]]))
          if (isPublished(id)) await republish(id);
        fresh.push(await publishRecord(undefined, 'music'));
        if (page === 1) {
          // One record goes for good, another is unpublished and published again (it keeps its place).
          gone = unseen[20];
          returning = unseen[unseen.length - 2];
          await unpublish(gone);
          await unpublish(returning);
        }
        if (page === 2) {
          await republish(returning as string);
          await refreshImages();
        }
      });
      expect(new Set(seen).size, 'no record twice').to.equal(seen.length);
      expect(
        seen.filter((id) => fresh.includes(id)),
        'records first published during the walk are left out',
      ).to.deep.equal([]);
      expect(seen, 'every record published before the first page, in its place then, except the unpublished one').to.deep.equal(
        expected.filter((id) => id !== gone),
      );
      expect(seen).to.include(returning);
      await republish(gone as string); // back for the next walks
    });
  }

  it('with filters: republishing without changing the filtered values neither repeats nor skips a record', async () => {
    for (const direction of ['desc', 'asc'] as const) {
      const music = new Map([...state].filter(([, t]) => t.category === 'music'));
      const expected = ordered(music, 'publishedAt', direction);
      const seen = await walkRecords({ direction, limit: 6 }, ['category:music', 'title.contains:story'], async (page, sofar) => {
        if (page % 3 === 0) clock.advance(1000);
        const unseen = expected.filter((id) => !sofar.includes(id));
        for (const id of [unseen[0], unseen[3], sofar[sofar.length - 1]]) if (isPublished(id)) await republish(id);
        await publishRecord(undefined, 'music');
      });
      expect(seen).to.deep.equal(expected);
    }
  });

  it('concurrent republications and publications while four walks run neither repeat nor skip a record', async () => {
    const old = [...state.keys()].filter(isPublished);
    const before = new Set(old);
    let walking = true;
    const writer = (async () => {
      for (let i = 0; walking; i++) {
        // Two different records each round, so the test's own bookkeeping of titles stays exact.
        await Promise.all([
          republish(old[(2 * i) % old.length]),
          republish(old[(2 * i + 1) % old.length]),
          publishRecord(undefined, 'local'),
        ]);
        if (i % 4 === 0) clock.advance(1000);
      }
    })();
    const walks = await Promise.all(
      COMBINATIONS.map(([sort, direction]) => walk(fixture.get, { type: 'news', sort, direction, limit: 9 })),
    );
    walking = false;
    await writer;
    for (const [i, seen] of walks.entries()) {
      expect(new Set(seen).size, `${COMBINATIONS[i].join(' ')}: no record twice`).to.equal(seen.length);
      expect(
        seen.filter((id) => before.has(id)),
        `${COMBINATIONS[i].join(' ')}: every old record`,
      ).to.have.members(old);
    }
  });

  it('a record unpublished or deleted during a walk is not delivered on the following pages; a draft never leaks', async () => {
    const expected = ordered(state, 'publishedAt', 'asc');
    const [, , withDraft, goes, deleted] = expected.slice(10);
    const draftTitle = 'Draft only, never delivered';
    const seen = await walkRecords({ direction: 'asc', limit: 5 }, [], async (page) => {
      if (page !== 0) return;
      await unpublish(goes);
      expect((await admin(server.url, 'DELETE', `/stations/${fixture.station.id}/records/${deleted}`)).status).to.equal(204);
      state.delete(deleted);
      const saved = await putRecord(server.url, fixture.station.id, withDraft, { type: 'news', values: { title: draftTitle } });
      expect(saved.status).to.equal(200);
    });
    expect(seen).not.to.include(goes);
    expect(seen).not.to.include(deleted);
    expect(seen, 'the record with a new draft keeps its place and its published body').to.deep.equal(
      expected.filter((id) => id !== goes && id !== deleted),
    );
    expect((await fixture.get(`/content/${goes}`)).status).to.equal(404);
    await republish(goes);
    await republish(withDraft);
  });

  it('a first page keeps its ETag while only other types change (the snapshot clock is per type)', async () => {
    const first = await fixture.get('/content?type=news&limit=3');
    const etag = first.headers.get('etag') as string;
    expect(first.body.nextCursor).to.be.a('string');
    const other = await admin(server.url, 'PUT', `/stations/${fixture.station.id}/content-types/show`, {
      label: 'Show',
      fields: [{ key: 'title', label: 'T', kind: 'text' }],
    });
    expect(other.status).to.equal(200);
    await published(server.url, fixture.station.id, 'show', { title: 'Elsewhere' });
    expect((await fixture.get('/content?type=news&limit=3', { 'if-none-match': etag })).status).to.equal(304);
  });
});
