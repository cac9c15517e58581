import { expect } from 'chai';
import { ManualClock } from '../../../src/lib/clock.ts';
import { startTestServer, type TestServer } from '../../support/server.ts';
import { requiresPostgresServer } from '../../support/mode.ts';
import { eventually } from '../../support/factories.ts';
import { admin } from '../../support/http.ts';
import { ingest, ingestFixture } from '../../support/ingest.ts';
import { insertBroadcast } from '../../support/scheduleRows.ts';
import { startWorkers } from '../../../workers/index.ts';
import { randomUUID } from 'node:crypto';
import { computeOnAir, refreshOnAirIn } from '../../../src/domains/schedule/onair.ts';
import { lockStation } from '../../../src/domains/stations/lock.ts';
import { followObservation } from '../../../src/domains/nowPlaying/following.ts';
import { inTransaction } from '../../../src/lib/db.ts';

// docs/now-playing.md#responses: the ordered outcome rules, each as that table states it.

const T0 = new Date('2026-06-01T12:00:00Z');
const minutes = (n: number) => n * 60_000;
const at = (offsetMs: number) => T0.getTime() + offsetMs;

const RUNDOWN = [
  { artist: 'Daft Punk', title: 'One More Time' },
  { artist: 'Queen', title: 'Bohemian Rhapsody' },
  { artist: 'Beyonce', title: 'Crazy In Love!' },
  { kind: 'jingle' as const, title: 'Station ID' },
];

describe('now-playing ingest: outcomes (the ordered rules)', () => {
  const clock = new ManualClock(T0);
  let server: TestServer;
  let workers: Awaited<ReturnType<typeof startWorkers>> | null = null;

  /** A station with a live broadcast from T0 − 10 min to T0 + 50 min and the rundown above. */
  async function liveStation(overrides: Record<string, unknown> = {}, items: Array<Record<string, unknown>> = RUNDOWN) {
    const fixture = await ingestFixture(server.url, overrides);
    const rows = await insertBroadcast(server.svc.db, {
      stationId: fixture.station.id,
      startsAt: new Date(at(-minutes(10))),
      endsAt: new Date(at(minutes(50))),
      items: items as never,
    });
    return { ...fixture, ...rows };
  }
  const stored = (stationId: string) => server.svc.db('observations').where({ station_id: stationId }).orderBy('receipt_seq');

  before(async () => {
    server = await startTestServer({ clock });
  });
  after(async () => {
    await workers?.close();
    await server.close();
  });
  beforeEach(() => clock.set(T0));

  it('rule 9: with the worker stopped the observation is stored first and answered `recorded` within about 2 s; the worker later updates the stored outcome', async () => {
    const { station, ingestToken, itemIds } = await liveStation();
    const started = Date.now();
    const res = await ingest(server.url, station, ingestToken, {
      eventId: 'down-1',
      observedAt: at(0),
      artist: 'Queen',
      title: 'Bohemian Rhapsody',
    });
    const waited = Date.now() - started;
    expect(res.body).to.deep.equal({ accepted: true, outcome: 'recorded' });
    expect(waited).to.be.within(1900, 3500);
    const [row] = await stored(station.id);
    expect(row).to.include({ outcome: 'recorded', accepted: true, followed_at: null });
    // A retry while following is still pending answers the same.
    expect(
      (
        await ingest(server.url, station, ingestToken, {
          eventId: 'down-1',
          observedAt: at(0),
          artist: 'Queen',
          title: 'Bohemian Rhapsody',
        })
      ).body,
    ).to.deep.equal({ accepted: true, outcome: 'recorded' });

    workers = await startWorkers(server.svc);
    const followed = await eventually(async () => {
      const [r] = await stored(station.id);
      return r.followed_at ? r : null;
    });
    expect(followed).to.include({ outcome: 'matched', accepted: true, rundown_item_id: itemIds[1] });
    // Once followed, a retry of the same observation answers the stored outcome.
    expect(
      (
        await ingest(server.url, station, ingestToken, {
          eventId: 'down-1',
          observedAt: at(0),
          artist: 'Queen',
          title: 'Bohemian Rhapsody',
        })
      ).body,
    ).to.deep.equal({ accepted: true, outcome: 'matched' });
  });

  it('rule 8: `matched` (score ≥ 0.9) ignoring case, accents, punctuation, feat. parts and bracketed suffixes; the item and broadcast are stored', async () => {
    const { station, ingestToken, itemIds, broadcastId } = await liveStation();
    clock.set(at(minutes(10)));
    const a = await ingest(server.url, station, ingestToken, {
      observedAt: at(minutes(4)),
      artist: 'QUEEN',
      title: 'Bohemian Rhapsody (Remastered 2011)',
    });
    expect(a.body).to.deep.equal({ accepted: true, outcome: 'matched' });
    const b = await ingest(server.url, station, ingestToken, {
      observedAt: at(minutes(8)),
      artist: 'Beyoncé feat. Jay-Z',
      title: 'Crazy in Love',
    });
    expect(b.body).to.deep.equal({ accepted: true, outcome: 'matched' });
    const c = await ingest(server.url, station, ingestToken, {
      observedAt: at(minutes(1)),
      streamTitle: 'Daft Punk - One More Time [Radio Edit]',
    });
    expect(c.body).to.deep.equal({ accepted: true, outcome: 'matched' });
    const rows = await stored(station.id);
    expect(rows.map((r) => r.rundown_item_id)).to.deep.equal([itemIds[1], itemIds[2], itemIds[0]]);
    expect(rows.every((r) => r.broadcast_id === broadcastId && r.score >= 0.9)).to.equal(true);
  });

  it('rule 8: `uncertain` for 0.6 ≤ score < 0.9 (the planned title by another artist), accepted true', async () => {
    const { station, ingestToken, itemIds } = await liveStation();
    const res = await ingest(server.url, station, ingestToken, { observedAt: at(0), artist: 'A Tribute Band', title: 'Bohemian Rhapsody' });
    expect(res.body).to.deep.equal({ accepted: true, outcome: 'uncertain' });
    const [row] = await stored(station.id);
    expect(row.rundown_item_id).to.equal(itemIds[1]);
    expect(row.score).to.be.at.least(0.6).and.below(0.9);
  });

  it('rule 8: `ignored` below 0.6 — recorded but not matched, accepted true', async () => {
    const { station, ingestToken, listenerToken } = await liveStation();
    const res = await ingest(server.url, station, ingestToken, {
      observedAt: at(0),
      artist: 'Nobody Planned',
      title: 'Something Else Entirely',
    });
    expect(res.body).to.deep.equal({ accepted: true, outcome: 'ignored' });
    const [row] = await stored(station.id);
    expect(row.rundown_item_id).to.equal(null);
    expect(row.score).to.be.below(0.6);
    const history = (await (
      await fetch(`${server.url}/api/v1/stations/${station.slug}/track-history`, { headers: { authorization: `Bearer ${listenerToken}` } })
    ).json()) as { items: Array<{ title: string }> };
    expect(history.items.map((i) => i.title)).to.deep.equal(['Something Else Entirely']);
  });

  it('rule 8: equal scores are broken by the nearness of the planned slot to observedAt', async () => {
    const items = [
      { artist: 'Toto', title: 'Africa', durationSeconds: 300 },
      { artist: 'Other', title: 'Filler', durationSeconds: 1200 },
      { artist: 'Toto', title: 'Africa', durationSeconds: 300 },
    ];
    const { station, ingestToken, itemIds } = await liveStation({}, items);
    clock.set(at(minutes(20)));
    // Slots: item 0 at −10..−5 min, item 2 at +15..+20 min.
    await ingest(server.url, station, ingestToken, { observedAt: at(minutes(14)), artist: 'Toto', title: 'Africa' });
    await ingest(server.url, station, ingestToken, { observedAt: at(-minutes(9)), artist: 'Toto', title: 'Africa', album: 'Toto IV' });
    const rows = await stored(station.id);
    expect(rows.map((r) => [r.outcome, r.rundown_item_id])).to.deep.equal([
      ['matched', itemIds[2]],
      ['matched', itemIds[0]],
    ]);
  });

  it('rule 7: a live broadcast without rundown items → `on-air-not-following-rundown`, accepted false, still stored', async () => {
    const { station, ingestToken } = await liveStation({}, []);
    const res = await ingest(server.url, station, ingestToken, { observedAt: at(0), artist: 'Queen', title: 'Bohemian Rhapsody' });
    expect(res.body).to.deep.equal({ accepted: false, outcome: 'on-air-not-following-rundown' });
    expect(await stored(station.id)).to.have.length(1);
  });

  it('rule 6: no published, non-cancelled broadcast covering observedAt → `no-live-broadcast`, accepted false, still stored', async () => {
    const { station, ingestToken } = await liveStation();
    clock.set(at(minutes(55)));
    const outside = await ingest(server.url, station, ingestToken, {
      observedAt: at(minutes(51)),
      artist: 'Queen',
      title: 'Bohemian Rhapsody',
    });
    expect(outside.body).to.deep.equal({ accepted: false, outcome: 'no-live-broadcast' });
    // The broadcast window is [startsAt, endsAt): its end is no longer live.
    const atEnd = await ingest(server.url, station, ingestToken, {
      eventId: 'at-end',
      observedAt: at(minutes(50)),
      artist: 'Queen',
      title: 'Bohemian Rhapsody',
    });
    expect(atEnd.body.outcome).to.equal('no-live-broadcast');

    const unpublished = await ingestFixture(server.url);
    await insertBroadcast(server.svc.db, {
      stationId: unpublished.station.id,
      startsAt: new Date(at(-minutes(10))),
      endsAt: new Date(at(minutes(50))),
      published: false,
      items: RUNDOWN,
    });
    expect(
      (
        await ingest(server.url, unpublished.station, unpublished.ingestToken, {
          observedAt: at(0),
          artist: 'Queen',
          title: 'Bohemian Rhapsody',
        })
      ).body.outcome,
    ).to.equal('no-live-broadcast');

    const cancelled = await ingestFixture(server.url);
    await insertBroadcast(server.svc.db, {
      stationId: cancelled.station.id,
      startsAt: new Date(at(-minutes(10))),
      endsAt: new Date(at(minutes(50))),
      cancellationReason: 'Football',
      items: RUNDOWN,
    });
    expect(
      (
        await ingest(server.url, cancelled.station, cancelled.ingestToken, {
          observedAt: at(0),
          artist: 'Queen',
          title: 'Bohemian Rhapsody',
        })
      ).body.outcome,
    ).to.equal('no-live-broadcast');
    expect(await stored(station.id)).to.have.length(2);
  });

  it('rule 6: without observedAt the receipt time decides which broadcast is live', async () => {
    const { station, ingestToken } = await liveStation();
    expect((await ingest(server.url, station, ingestToken, { artist: 'Queen', title: 'Bohemian Rhapsody' })).body.outcome).to.equal(
      'matched',
    );
    clock.set(at(minutes(55)));
    expect((await ingest(server.url, station, ingestToken, { artist: 'Daft Punk', title: 'One More Time' })).body.outcome).to.equal(
      'no-live-broadcast',
    );
  });

  it('rule 5: station rundownFollowing off → `recorded`, accepted true, stored as final', async () => {
    const { station, ingestToken } = await liveStation({ rundownFollowing: false });
    const res = await ingest(server.url, station, ingestToken, { observedAt: at(0), artist: 'Queen', title: 'Bohemian Rhapsody' });
    expect(res.body).to.deep.equal({ accepted: true, outcome: 'recorded' });
    const [row] = await stored(station.id);
    expect(row.followed_at).to.be.an.instanceOf(Date);
  });

  it('rule 4: isPlaying false → `not-playing`, accepted true, before any rundown check', async () => {
    const { station, ingestToken } = await liveStation();
    const res = await ingest(server.url, station, ingestToken, {
      observedAt: at(0),
      artist: 'Queen',
      title: 'Bohemian Rhapsody',
      isPlaying: false,
    });
    expect(res.body).to.deep.equal({ accepted: true, outcome: 'not-playing' });
    clock.set(at(minutes(90)));
    expect((await ingest(server.url, station, ingestToken, { observedAt: at(minutes(90)), isPlaying: false })).body.outcome).to.equal(
      'not-playing',
    );
  });

  it('rule 2: observedAt more than 300 s ahead of the server clock → `rejected`, accepted false, nothing stored', async () => {
    const { station, ingestToken } = await liveStation();
    const ahead = await ingest(server.url, station, ingestToken, { observedAt: at(300_001), artist: 'Queen', title: 'Bohemian Rhapsody' });
    expect(ahead.body).to.deep.equal({ accepted: false, outcome: 'rejected' });
    expect(await stored(station.id)).to.have.length(0);
    const justInside = await ingest(server.url, station, ingestToken, {
      observedAt: at(300_000),
      artist: 'Queen',
      title: 'Bohemian Rhapsody',
    });
    expect(justInside.body.accepted).to.equal(true);
    expect(await stored(station.id)).to.have.length(1);
  });

  it('rule 1: the same eventId with the same payload answers the original response and stores nothing again; another payload is `rejected`', async () => {
    const { station, ingestToken } = await liveStation();
    const body = { eventId: 'ev-1', observedAt: at(0), artist: 'Queen', title: 'Bohemian Rhapsody', durationSeconds: 355 };
    const first = await ingest(server.url, station, ingestToken, body);
    expect(first.body).to.deep.equal({ accepted: true, outcome: 'matched' });
    // The same observation with the legacy alias is the same payload.
    const retry = await ingest(server.url, station, ingestToken, { ...body, durationSeconds: undefined, duration: 355 });
    expect(retry.body).to.deep.equal(first.body);
    const misuse = await ingest(server.url, station, ingestToken, { ...body, title: 'Another One Bites the Dust' });
    expect(misuse.body).to.deep.equal({ accepted: false, outcome: 'rejected' });
    const rows = await stored(station.id);
    expect(rows).to.have.length(1);
    expect(rows[0].title).to.equal('Bohemian Rhapsody');
    // eventIds are per station: another station may use the same one.
    const other = await liveStation();
    expect((await ingest(server.url, other.station, other.ingestToken, body)).body).to.deep.equal({ accepted: true, outcome: 'matched' });
  });

  it('rule 1 under concurrency: 50 simultaneous retries of one observation store exactly one row and all get the same response', async () => {
    const { station, ingestToken } = await liveStation();
    const body = { eventId: 'burst-1', observedAt: at(0), artist: 'Queen', title: 'Bohemian Rhapsody' };
    const replies = await Promise.all(Array.from({ length: 50 }, () => ingest(server.url, station, ingestToken, body)));
    expect(replies.map((r) => r.status)).to.deep.equal(Array(50).fill(200));
    expect(new Set(replies.map((r) => JSON.stringify(r.body)))).to.deep.equal(
      new Set([JSON.stringify({ accepted: true, outcome: 'matched' })]),
    );
    expect(await stored(station.id)).to.have.length(1);
  });

  it('keeps no completed following job in Redis; a later retry of the observation answers its stored outcome', async () => {
    workers ??= await startWorkers(server.svc);
    const { station, ingestToken } = await liveStation();
    const body = { eventId: 'gone-job-1', observedAt: at(0), artist: 'Queen', title: 'Bohemian Rhapsody' };
    expect((await ingest(server.url, station, ingestToken, body)).body).to.deep.equal({ accepted: true, outcome: 'matched' });
    const [row] = await stored(station.id);
    await eventually(async () => ((await server.svc.jobs.queue('ingest').getJob(row.id)) === undefined ? true : null));
    expect((await ingest(server.url, station, ingestToken, body)).body).to.deep.equal({ accepted: true, outcome: 'matched' });
    expect(await stored(station.id)).to.have.length(1);
  });

  describe('rule 3: collapse of payloads without eventId (injected clock)', () => {
    const track = { artist: 'Queen', title: 'Bohemian Rhapsody', album: 'A Night at the Opera' };

    it('the same track within 30 s of the last received one collapses into it: no new row, its outcome repeated', async () => {
      const { station, ingestToken } = await liveStation();
      const first = await ingest(server.url, station, ingestToken, track);
      expect(first.body.outcome).to.equal('matched');
      clock.advance(29_999);
      const again = await ingest(server.url, station, ingestToken, { ...track, durationSeconds: 300 });
      expect(again.body).to.deep.equal(first.body);
      expect(await stored(station.id)).to.have.length(1);
      clock.advance(1);
      await ingest(server.url, station, ingestToken, track);
      expect(await stored(station.id), 'received 30 s after the last stored one').to.have.length(2);
    });

    it('20 simultaneous identical payloads collapse into one row and all get the same response', async () => {
      const { station, ingestToken } = await liveStation();
      const replies = await Promise.all(Array.from({ length: 20 }, () => ingest(server.url, station, ingestToken, track)));
      expect(replies.map((r) => r.status)).to.deep.equal(Array(20).fill(200));
      expect(new Set(replies.map((r) => JSON.stringify(r.body)))).to.deep.equal(
        new Set([JSON.stringify({ accepted: true, outcome: 'matched' })]),
      );
      expect(await stored(station.id)).to.have.length(1);
    });

    it('does not collapse across a different album or play state, or when either side has an eventId', async () => {
      const { station, ingestToken } = await liveStation();
      await ingest(server.url, station, ingestToken, track);
      await ingest(server.url, station, ingestToken, { ...track, album: 'Greatest Hits' });
      await ingest(server.url, station, ingestToken, { ...track, album: 'Greatest Hits', isPlaying: false });
      await ingest(server.url, station, ingestToken, { ...track, eventId: 'with-id' });
      await ingest(server.url, station, ingestToken, track);
      expect(await stored(station.id)).to.have.length(5);
    });

    it('compares with the most recently received observation only (A, B, A is three rows)', async () => {
      const { station, ingestToken } = await liveStation();
      await ingest(server.url, station, ingestToken, track);
      clock.advance(1000);
      await ingest(server.url, station, ingestToken, { artist: 'Daft Punk', title: 'One More Time' });
      clock.advance(1000);
      await ingest(server.url, station, ingestToken, track);
      expect(await stored(station.id)).to.have.length(3);
    });
  });

  describe('the on-air row after following', () => {
    const onAirRow = async (stationId: string) =>
      (await server.svc.db('feed_rows').where({ station_id: stationId, kind: 'on-air', entry: 'current' }).first('data'))?.data ?? null;

    it('moves to the matched item and names the newest followed observation — the same row a rebuild from scratch gives, also when followed out of order', async () => {
      workers ??= await startWorkers(server.svc);
      const { station, ingestToken, itemIds } = await liveStation();
      // Planned now (T0 + 1:50): the jingle, since T0 − 1 min; every match below is newer than that.
      clock.set(at(minutes(1) + 50_000));
      const steps: Array<[Record<string, unknown>, string]> = [
        [{ observedAt: at(minutes(1)), artist: 'Queen', title: 'Bohemian Rhapsody' }, 'matched'],
        [{ observedAt: at(minutes(1) + 30_000), artist: 'Tribute Band', title: 'Crazy In Love' }, 'uncertain'],
        // Older than the two above, followed after them: neither `followed` nor the position may go back.
        [{ observedAt: at(minutes(0)), artist: 'Daft Punk', title: 'One More Time' }, 'matched'],
        [{ observedAt: at(minutes(1) + 45_000), artist: 'Nobody Planned', title: 'Something Else Entirely' }, 'ignored'],
      ];
      for (const [body, outcome] of steps) {
        expect((await ingest(server.url, station, ingestToken, body)).body).to.deep.equal({ accepted: true, outcome });
        const rebuilt = await computeOnAir(server.svc.db, station.id, clock.now());
        expect(await onAirRow(station.id), outcome).to.deep.equal(JSON.parse(JSON.stringify(rebuilt)));
      }
      const data = await onAirRow(station.id);
      expect(data.position.itemId).to.equal(itemIds[1]);
      expect(data.followed).to.deep.equal({
        itemId: itemIds[2],
        outcome: 'uncertain',
        at: new Date(at(minutes(1) + 30_000)).toISOString(),
      });
    });

    it('with upNext on, a match moves up next on the on-air row written by following (ads and jingles skipped), as a rebuild gives it', async () => {
      workers ??= await startWorkers(server.svc);
      const { station, ingestToken, itemIds } = await liveStation({ upNext: { enabled: true, count: 2 } }, [
        ...RUNDOWN.slice(0, 2),
        { kind: 'ad', title: 'Spot' },
        ...RUNDOWN.slice(2),
        { artist: 'Air', title: 'Sexy Boy' },
      ]);
      clock.set(at(minutes(1) + 50_000));
      expect(
        (await ingest(server.url, station, ingestToken, { observedAt: at(minutes(1)), artist: 'Daft Punk', title: 'One More Time' })).body
          .outcome,
      ).to.equal('matched');
      const data = await onAirRow(station.id);
      expect(data.position.itemId).to.equal(itemIds[0]);
      expect(data.upNext.map((i: { itemId: string }) => i.itemId)).to.deep.equal([itemIds[1], itemIds[3]]);
      expect(data).to.deep.equal(JSON.parse(JSON.stringify(await computeOnAir(server.svc.db, station.id, clock.now()))));
    });

    it('keeps the newest followed observation when many unplanned ones came after it and an older match is followed late', async () => {
      workers ??= await startWorkers(server.svc);
      const { station, ingestToken, itemIds } = await liveStation();
      clock.set(at(minutes(2)));
      expect(
        (await ingest(server.url, station, ingestToken, { observedAt: at(minutes(1)), artist: 'Queen', title: 'Bohemian Rhapsody' })).body
          .outcome,
      ).to.equal('matched');
      // More unplanned observations than following looks at first (it then reads further back).
      for (let i = 0; i < 12; i++) {
        const body = { observedAt: at(minutes(1) + (i + 1) * 4_000), artist: 'Nobody Planned', title: `Something Else ${i}` };
        expect((await ingest(server.url, station, ingestToken, body)).body.outcome).to.equal('ignored');
      }
      expect(
        (await ingest(server.url, station, ingestToken, { observedAt: at(minutes(0)), artist: 'Daft Punk', title: 'One More Time' })).body
          .outcome,
      ).to.equal('matched');
      const data = await onAirRow(station.id);
      expect(data.followed).to.deep.equal({ itemId: itemIds[1], outcome: 'matched', at: new Date(at(minutes(1))).toISOString() });
      expect(data).to.deep.equal(JSON.parse(JSON.stringify(await computeOnAir(server.svc.db, station.id, clock.now()))));
    });

    it('judges what is live after the station lock was granted: a boundary rebuild that held the lock is not overwritten with the older broadcast', async function () {
      requiresPostgresServer(this, 'two sessions, one waiting for the lock the other holds (PGlite is one session)');
      const { station } = await liveStation();
      const next = await insertBroadcast(server.svc.db, {
        stationId: station.id,
        startsAt: new Date(at(minutes(50))),
        endsAt: new Date(at(minutes(110))),
        items: RUNDOWN as never,
      });
      const db = server.svc.db;
      // The first show's on-air row, a millisecond before the next show starts.
      clock.set(at(minutes(50) - 1));
      await inTransaction(db, async (tx) => {
        await lockStation(tx, station.id);
        await refreshOnAirIn(tx, server.svc.bus, station.id, clock.now(), clock.now());
      });
      // An observation of the first show, stored and not yet followed.
      const observationId = randomUUID();
      await db('observations').insert({
        id: observationId,
        station_id: station.id,
        fingerprint: 'fp',
        artist: 'Queen',
        title: 'Bohemian Rhapsody',
        is_playing: true,
        observed_at: new Date(at(minutes(49))),
        received_at: clock.now(),
        sort_at: new Date(at(minutes(49))),
        outcome: 'recorded',
        accepted: true,
      });
      let following: Promise<unknown> | null = null;
      await inTransaction(db, async (tx) => {
        // The boundary rebuild holds the lock while the follow reads the clock and waits for it.
        await lockStation(tx, station.id);
        following = followObservation(server.svc, observationId, station.id);
        await eventually(async () => {
          const waiting = await db.raw(
            "SELECT count(*)::int AS n FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND datname = current_database()",
          );
          return waiting.rows[0].n > 0;
        });
        clock.set(at(minutes(50) + 1000));
        await refreshOnAirIn(tx, server.svc.bus, station.id, clock.now(), clock.now());
      });
      expect(await following).to.deep.equal({ accepted: true, outcome: 'matched' });
      const data = await onAirRow(station.id);
      expect(data.broadcast.id).to.equal(next.broadcastId);
      expect(data).to.deep.equal(JSON.parse(JSON.stringify(await computeOnAir(db, station.id, clock.now()))));
    });

    it('stops counting an observation as followed once its item is dropped from the rundown (the observation keeps its record)', async () => {
      workers ??= await startWorkers(server.svc);
      const { station, ingestToken, itemIds, broadcastId } = await liveStation();
      clock.set(at(minutes(2)));
      expect(
        (await ingest(server.url, station, ingestToken, { observedAt: at(0), artist: 'Daft Punk', title: 'One More Time' })).body.outcome,
      ).to.equal('matched');
      expect(
        (await ingest(server.url, station, ingestToken, { observedAt: at(minutes(1)), artist: 'Queen', title: 'Bohemian Rhapsody' })).body
          .outcome,
      ).to.equal('matched');
      expect((await onAirRow(station.id)).followed.itemId).to.equal(itemIds[1]);

      // The operator drops Queen's item; the others keep their ids.
      const kept = [0, 2, 3].map((i) => ({
        id: itemIds[i],
        kind: RUNDOWN[i].kind ?? 'track',
        artist: RUNDOWN[i].artist,
        title: RUNDOWN[i].title,
        durationSeconds: 240,
      }));
      expect(
        (await admin(server.url, 'PUT', `/stations/${station.id}/broadcasts/${broadcastId}/rundown`, { items: kept })).status,
      ).to.equal(200);
      const rebuilt = await onAirRow(station.id);
      expect(rebuilt.followed).to.deep.equal({ itemId: itemIds[0], outcome: 'matched', at: new Date(at(0)).toISOString() });
      expect(rebuilt).to.deep.equal(JSON.parse(JSON.stringify(await computeOnAir(server.svc.db, station.id, clock.now()))));
      const queen = await server.svc.db('observations').where({ station_id: station.id, title: 'Bohemian Rhapsody' }).first();
      expect(queen).to.include({ outcome: 'matched', rundown_item_id: itemIds[1] });

      // Following an older observation afterwards does not bring the dropped item back.
      expect(
        (await ingest(server.url, station, ingestToken, { observedAt: at(30_000), artist: 'Tribute Band', title: 'Crazy In Love' })).body
          .outcome,
      ).to.equal('uncertain');
      const data = await onAirRow(station.id);
      expect(data.followed).to.deep.equal({ itemId: itemIds[2], outcome: 'uncertain', at: new Date(at(30_000)).toISOString() });
      expect(data).to.deep.equal(JSON.parse(JSON.stringify(await computeOnAir(server.svc.db, station.id, clock.now()))));
    });

    it('is rebuilt for the broadcast live now when the observation belongs to the one before', async () => {
      workers ??= await startWorkers(server.svc);
      const { station, ingestToken } = await liveStation();
      // The next show starts at T0 + 50 min, right after the first one.
      const next = await insertBroadcast(server.svc.db, {
        stationId: station.id,
        startsAt: new Date(at(minutes(50))),
        endsAt: new Date(at(minutes(110))),
        items: RUNDOWN as never,
      });
      clock.set(at(minutes(50) + 5_000));
      // Observed in the last second of the first show, reported five seconds into the next one.
      const res = await ingest(server.url, station, ingestToken, {
        observedAt: at(minutes(50) - 1_000),
        artist: 'Queen',
        title: 'Bohemian Rhapsody',
      });
      expect(res.body).to.deep.equal({ accepted: true, outcome: 'matched' });
      const data = await onAirRow(station.id);
      expect(data.broadcast.id).to.equal(next.broadcastId);
      expect(data).to.deep.equal(JSON.parse(JSON.stringify(await computeOnAir(server.svc.db, station.id, clock.now()))));
    });
  });
});
