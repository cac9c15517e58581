import { expect } from 'chai';
import { ManualClock } from '../../src/lib/clock.ts';
import { AsOfMemo } from '../../src/lib/asOf.ts';
import { queriesDuring, startTestServer, type TestServer } from '../support/server.ts';
import { request, type Reply } from '../support/http.ts';
import { eventually } from '../support/factories.ts';
import { putBroadcast, scheduleFixture, type ScheduleFixture } from '../domains/schedule/helpers.ts';
import { gql } from '../graphql/helpers.ts';

// docs/schedule.md, "asOf": an answer carrying `asOf` keeps it — and so its bytes and ETag — for as long
// as it shows the same, whoever recomputes it: the same process after the read cache's safety age, an
// invalidation that changed nothing it shows, another web process, a restarted one. A real change (the
// broadcast edited, its end passed) gives a new `asOf` and ETag at once.

const T0 = new Date('2026-06-10T10:00:00Z');
const STREAMS = [{ label: 'MP3', url: 'https://stream.example.org/live.mp3', key: 'mp3', latencySeconds: 20 }];

describe('asOf kept while the answer shows the same (current broadcast, live)', () => {
  const clock = new ManualClock(T0);
  const servers: TestServer[] = [];
  const start = async () => {
    const server = await startTestServer({ clock });
    servers.push(server);
    return server;
  };
  after(async () => {
    for (const server of servers) await server.close().catch(() => undefined);
  });

  const get = (server: TestServer, fx: ScheduleFixture, path: string, etag?: string): Promise<Reply> =>
    request(server.url, 'GET', `/api/v1/stations/${fx.station.slug}${path}`, {
      token: fx.token,
      headers: etag ? { 'if-none-match': etag } : {},
    });

  it('304 across recomputes, another process and a restart; a new asOf and ETag once the broadcast is edited or ends', async () => {
    clock.set(T0);
    let a = await start();
    const b = await start();
    const fx = await scheduleFixture(a.url, { profile: { streamUrls: STREAMS } });
    const starts = new Date(T0.getTime() - 600_000).toISOString();
    const ends = T0.getTime() + 3_000_000;
    const id = await putBroadcast(a.url, fx, starts, new Date(ends).toISOString());

    const first = await get(a, fx, '/broadcast/current');
    expect(first.status, first.text).to.equal(200);
    expect(first.body.broadcast.id).to.equal(id);
    expect(first.body.asOf).to.equal(T0.toISOString());
    const etag = first.headers.get('etag') as string;
    const firstStream = await get(a, fx, '/broadcast/current?stream=mp3');
    const streamEtag = firstStream.headers.get('etag') as string;
    const firstLive = await get(a, fx, '/live');
    const liveEtag = firstLive.headers.get('etag') as string;

    // The read cache's safety age runs out (cleared here): recomputed at a later instant, the same answer.
    clock.set(T0.getTime() + 5_000);
    a.svc.reads.clear();
    const again = await get(a, fx, '/broadcast/current', etag);
    expect(again.status, 'recomputed after the safety age: still the right answer').to.equal(304);
    expect((await get(a, fx, '/broadcast/current')).body.asOf).to.equal(T0.toISOString());

    // Another web process computes the same answer later: it takes the first process' asOf.
    clock.set(T0.getTime() + 10_000);
    expect((await get(b, fx, '/broadcast/current', etag)).status, 'another process').to.equal(304);
    expect((await get(b, fx, '/broadcast/current?stream=mp3', streamEtag)).status, 'another process, ?stream=').to.equal(304);
    expect((await get(b, fx, '/live', liveEtag)).status, 'another process, live (nothing playing)').to.equal(304);

    // A schedule write that changes nothing this answer shows: recomputed (a query), still 304.
    await putBroadcast(a.url, fx, new Date(T0.getTime() + 86_400_000).toISOString(), new Date(T0.getTime() + 90_000_000).toISOString());
    const recomputed = await queriesDuring(a, async () => {
      expect((await get(a, fx, '/broadcast/current', etag)).status, 'after an unrelated schedule write').to.equal(304);
    });
    expect(recomputed, 'the write dropped the cached answer: it was computed again').to.be.greaterThan(0);
    await eventually(async () => (await get(b, fx, '/broadcast/current', etag)).status === 304, { timeoutMs: 3000 });

    // The web process restarts: the answer, rebuilt from stored state, keeps its asOf and ETag.
    await a.close();
    a = await start();
    expect((await get(a, fx, '/broadcast/current', etag)).status, 'after a restart').to.equal(304);
    expect((await get(a, fx, '/broadcast/current?stream=mp3', streamEtag)).status, 'after a restart, ?stream=').to.equal(304);
    const query = '{ currentBroadcast { asOf broadcast { id } } }';
    const [ga, gb] = await Promise.all([gql(a.url, fx.station.slug, fx.token, query), gql(b.url, fx.station.slug, fx.token, query)]);
    expect(ga.body.data.currentBroadcast.asOf).to.equal(T0.toISOString());
    expect(gb.body.data.currentBroadcast.asOf).to.equal(T0.toISOString());

    // A real change: the broadcast edited — a new asOf and ETag at once, the same in both processes.
    clock.set(T0.getTime() + 20_000);
    await putBroadcast(a.url, fx, starts, new Date(ends).toISOString(), { title: 'Edited show' }, id);
    const edited = await get(a, fx, '/broadcast/current', etag);
    expect(edited.status, 'edited: a new answer').to.equal(200);
    expect(edited.body.broadcast.title).to.equal('Edited show');
    expect(edited.body.asOf).to.equal(new Date(T0.getTime() + 20_000).toISOString());
    const editedEtag = edited.headers.get('etag') as string;
    clock.set(T0.getTime() + 25_000);
    await eventually(async () => (await get(b, fx, '/broadcast/current')).headers.get('etag') === editedEtag, { timeoutMs: 3000 });

    // Its end passes: nothing on air, at once.
    clock.set(ends);
    const ended = await get(a, fx, '/broadcast/current', editedEtag);
    expect(ended.status).to.equal(200);
    expect(ended.body.broadcast).to.equal(null);
    expect(ended.body.asOf).to.equal(new Date(ends).toISOString());
  });

  it('the memo: the first instant of the same answer, a new one for another; per-second answers keep none', async () => {
    const server = servers[servers.length - 1] ?? (await start());
    const fx = await scheduleFixture(server.url);
    const memo = new AsOfMemo(server.svc.db);
    const other = new AsOfMemo(server.svc.db);
    const key = `test\n${fx.station.id}\n${Date.now()}`;
    const t = (s: number) => new Date(T0.getTime() + s * 1000);
    expect(await memo.keep(key, fx.station.id, 'schedule', 'A', t(0), Infinity)).to.deep.equal(t(0));
    expect(await other.keep(key, fx.station.id, 'schedule', 'A', t(5), Infinity), 'another process').to.deep.equal(t(0));
    expect(await other.keep(key, fx.station.id, 'schedule', 'B', t(6), Infinity), 'another answer').to.deep.equal(t(6));
    // This process knew A; once told the area changed, it asks the store again and sees B's change.
    memo.forget(fx.station.id, 'schedule');
    expect(await memo.keep(key, fx.station.id, 'schedule', 'A', t(7), Infinity), 'A again after B: new').to.deep.equal(t(7));
    expect(await memo.keep(key, fx.station.id, 'schedule', 'C', t(8), t(8).getTime() + 999), 'exact for under a second').to.deep.equal(
      t(8),
    );
    expect(await other.keep(key, fx.station.id, 'schedule', 'C', t(9), Infinity), 'nothing was kept for it').to.deep.equal(t(9));
  });
});
