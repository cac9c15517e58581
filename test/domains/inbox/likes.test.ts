import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { useClockedServer } from '../../support/server.ts';
import { admin } from '../../support/http.ts';
import { parseCsv } from '../audience/helpers.ts';
import { inboxFixture } from './helpers.ts';
import { clientIdentity } from '../../../src/domains/inbox/identity.ts';
import { castVotes, shardOf } from '../../../src/domains/inbox/votes.ts';

// docs/inbox.md, "Likes": a vote on the play on air now (409 NOTHING_PLAYING when none), one per client
// per play, the last counts, 0 withdraws; the play log's `likes` and `dislikes` (JSON and CSV).

const T0 = new Date('2026-12-15T10:00:00.000Z');
const RANGE = `from=${encodeURIComponent('2026-12-15T09:00:00Z')}&to=${encodeURIComponent('2026-12-15T11:00:00Z')}`;

describe('inbox: likes of the play on air', () => {
  const { clock, server } = useClockedServer(T0, { reset: true });

  it('409 NOTHING_PLAYING before any play, when the encoder said nothing plays, and when the play is stale', async () => {
    const f = await inboxFixture(server.url, clock, { nowPlayingFreshnessSeconds: 600 });
    const refused = await f.like(randomUUID(), 1);
    expect([refused.status, refused.body.error.code]).to.deep.equal([409, 'NOTHING_PLAYING']);
    await f.play('A', 'One');
    expect((await f.like(randomUUID(), 1)).status).to.equal(200);
    clock.advance(601_000);
    expect((await f.like(randomUUID(), 1)).body.error.code, 'stale').to.equal('NOTHING_PLAYING');
    await f.play('A', 'Two');
    expect((await f.like(randomUUID(), 1)).status).to.equal(200);
    clock.advance(1000);
    const { ingest } = await import('../../support/ingest.ts');
    expect(
      (await ingest(server.url, f.station, f.ingestToken, { eventId: randomUUID(), observedAt: clock.nowMs(), isPlaying: false })).status,
    ).to.equal(200);
    expect((await f.like(randomUUID(), 1)).body.error.code, 'stopped').to.equal('NOTHING_PLAYING');
  });

  it('one vote per client per play: the last counts, 0 withdraws it; each answer carries the play’s counts', async () => {
    const f = await inboxFixture(server.url, clock);
    await f.play('A', 'One');
    const [ann, bob, cy] = [randomUUID(), randomUUID(), randomUUID()];
    const first = await f.like(ann, 1);
    expect(first.status, first.text).to.equal(200);
    expect(first.body).to.deep.include({ value: 1, likes: 1, dislikes: 0 });
    expect(first.body.playId).to.be.a('string');
    expect((await f.like(ann, 1)).body).to.deep.include({ likes: 1, dislikes: 0 });
    expect((await f.like(bob, 1)).body).to.deep.include({ likes: 2, dislikes: 0 });
    expect((await f.like(ann, -1)).body).to.deep.include({ value: -1, likes: 1, dislikes: 1 });
    expect((await f.like(cy, -1)).body).to.deep.include({ likes: 1, dislikes: 2 });
    expect((await f.like(ann, 0)).body).to.deep.include({ value: 0, likes: 1, dislikes: 1 });
    expect((await f.like(ann, 0)).body).to.deep.include({ likes: 1, dislikes: 1 });
    // The next play starts from nothing.
    clock.advance(200_000);
    await f.play('B', 'Two');
    const next = await f.like(ann, 1);
    expect(next.body).to.deep.include({ likes: 1, dislikes: 0 });
    expect(next.body.playId).to.not.equal(first.body.playId);
  });

  it('votes at once from many clients are each counted exactly once (the last vote of each)', async () => {
    const f = await inboxFixture(server.url, clock);
    await f.play('A', 'Burst');
    const clients = Array.from({ length: 60 }, () => randomUUID());
    // Every client votes twice at once; which of its two votes lands last is up to the network, so the
    // expected counts are read back from the stored votes (one per client).
    const answers = await Promise.all(clients.flatMap((c, i) => [f.like(c, 1), f.like(c, i % 3 === 0 ? -1 : 1)]));
    for (const answer of answers) expect(answer.status, answer.text).to.equal(200);
    const votes: Array<{ value: number }> = await server.svc.db('inbox_votes').where({ observation_id: answers[0].body.playId });
    expect(votes).to.have.length(60);
    const likes = votes.filter((v) => v.value === 1).length;
    const counted = await f.like(randomUUID(), 0);
    expect(counted.body).to.deep.include({ likes, dislikes: 60 - likes });
  }).timeout(30_000);

  it('one client’s votes at once are decided one after the other: no difference is lost or counted twice', async () => {
    // Votes are one statement without a client lock (docs/inbox.md#how-it-works): the value a vote replaces
    // is read under the vote row's lock, so votes of one client racing each other in two batches (two web
    // processes; within one, a client waits for the next batch) each take out what the other put in. Read
    // from the statement's snapshot instead, two first votes at once would both count, and a like racing a
    // dislike would leave a count with no vote behind it. The batches lock in one order: no deadlock.
    const f = await inboxFixture(server.url, clock);
    await f.play('A', 'Race');
    const station = { id: f.station.id, nowPlayingFreshnessSeconds: 600 };
    const clients = Array.from({ length: 40 }, () => clientIdentity(server.svc.config.secret, f.station.id, randomUUID()));
    const values = [1, -1, 0, 1, -1, 1] as const;
    for (let round = 0; round < 4; round++) {
      // Six batches at once, each with every client (in an order of its own) and a value of its own.
      const batches = values.map((_, k) =>
        clients
          .map((c, i) => ({ ...c, shard: shardOf(c.clientHash), value: values[(i + k + round) % values.length] }))
          // an order of its own: rotated by k, every other batch reversed
          .map((_, i, all) => all[(i + 7 * k) % all.length])
          .reverse()
          .map((_, i, all) => (k % 2 ? all[i] : all[all.length - 1 - i])),
      );
      const answers = await Promise.all(batches.map((ballots) => castVotes(server.svc.db, station, ballots, clock.now())));
      const playId = answers[0]!.playId;
      const votes: Array<{ value: number }> = await server.svc.db('inbox_votes').where({ observation_id: playId });
      const ours = votes.filter((v: any) => clients.some((c) => c.clientHash === v.client_hash));
      expect(ours, 'one row per client').to.have.length(40);
      const stored = { likes: votes.filter((v) => v.value === 1).length, dislikes: votes.filter((v) => v.value === -1).length };
      const [shards] = await server.svc
        .db('inbox_vote_counts')
        .where({ observation_id: playId })
        .select(server.svc.db.raw('coalesce(sum(likes), 0)::int AS likes, coalesce(sum(dislikes), 0)::int AS dislikes'));
      expect(shards, `round ${round}: the shards against the stored votes`).to.deep.equal(stored);
      expect((await f.like(randomUUID(), 0)).body).to.deep.include(stored);
    }
    // Through HTTP, many votes of each client at once: one answer each, and the counts still exact.
    const answers = await Promise.all(clients.slice(0, 20).flatMap(() => values.map((v) => f.like(randomUUID(), v))));
    for (const answer of answers) expect(answer.status, answer.text).to.equal(200);
    const same = randomUUID();
    const racing = await Promise.all(values.map((v) => f.like(same, v)));
    for (const answer of racing) expect(answer.status, answer.text).to.equal(200);
    const votes: Array<{ value: number }> = await server.svc.db('inbox_votes').where({ observation_id: racing[0].body.playId });
    const stored = { likes: votes.filter((v) => v.value === 1).length, dislikes: votes.filter((v) => v.value === -1).length };
    expect((await f.like(randomUUID(), 0)).body).to.deep.include(stored);
  }).timeout(60_000);

  it('a vote racing a song change lands on the play on air when it ran: counted there, never on the next or the last', async () => {
    const f = await inboxFixture(server.url, clock);
    await f.play('A', 'Before');
    const before = (await f.like(randomUUID(), 0)).body.playId;
    // Votes sent while the song changes land on either play, each counted on the play its answer names;
    // every vote sent after the change was answered lands on the new play.
    const racing = Array.from({ length: 40 }, () => f.like(randomUUID(), 1));
    await f.play('B', 'After');
    const after = await Promise.all(Array.from({ length: 20 }, () => f.like(randomUUID(), 1)));
    const raced = await Promise.all(racing);
    const next = after[0].body.playId;
    expect(next).to.be.a('string').and.not.equal(before);
    for (const answer of after) expect(answer.body.playId).to.equal(next);
    const onBefore = raced.filter((a) => a.body.playId === before).length;
    const onNext = raced.filter((a) => a.body.playId === next).length;
    expect(onBefore + onNext, 'every racing vote answered on one of the two plays').to.equal(40);
    const json = await admin(server.url, 'GET', `/stations/${f.station.id}/plays?${RANGE}`);
    expect(json.body.plays.map((p: Record<string, unknown>) => [p.title, p.likes])).to.deep.equal([
      ['Before', onBefore],
      ['After', onNext + 20],
    ]);
  });

  it('the play log has likes and dislikes per play, in JSON and CSV', async () => {
    const f = await inboxFixture(server.url, clock);
    await f.play('A', 'One');
    await f.like(randomUUID(), 1);
    await f.like(randomUUID(), 1);
    await f.like(randomUUID(), -1);
    clock.advance(180_000);
    await f.play('A', 'Two');
    const json = await admin(server.url, 'GET', `/stations/${f.station.id}/plays?${RANGE}`);
    expect(json.status, json.text).to.equal(200);
    expect(json.body.plays.map((p: Record<string, unknown>) => [p.title, p.likes, p.dislikes])).to.deep.equal([
      ['One', 2, 1],
      ['Two', 0, 0],
    ]);
    const csv = await admin(server.url, 'GET', `/stations/${f.station.id}/plays?${RANGE}&format=csv`);
    expect(csv.text.split('\r\n')[0]).to.match(/,performances,performancesByStream,likes,dislikes$/);
    expect(parseCsv(csv.text).map((row) => [row.title, row.likes, row.dislikes])).to.deep.equal([
      ['One', '2', '1'],
      ['Two', '0', '0'],
    ]);
  });

  it('404 MODULE_DISABLED with likes switched off; 400 for a value other than 1, -1, 0', async () => {
    const f = await inboxFixture(server.url, clock);
    await f.play('A', 'One');
    for (const value of [2, '1', null, 0.5]) expect((await f.like(randomUUID(), value as number)).status, String(value)).to.equal(400);
    await f.settings({ likes: false });
    const res = await f.like(randomUUID(), 1);
    expect([res.status, res.body.error.code]).to.deep.equal([404, 'MODULE_DISABLED']);
  });
});
