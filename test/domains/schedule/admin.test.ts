import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { sharedServer, type TestServer } from '../../support/server.ts';
import { admin, request } from '../../support/http.ts';
import { getSchedule, ids, putBroadcast, putBroadcastRaw, putRundown, scheduleFixture } from './helpers.ts';

const issuePaths = (body: { error: { issues?: Array<{ path: string }> } }) => (body.error.issues ?? []).map((i) => i.path);

describe('schedule admin API /admin/v1/stations/{id}/…', () => {
  let server: TestServer;
  before(async () => {
    server = await sharedServer();
  });

  it('PUT presenters and programs is idempotent and answers 200 with the stored object', async () => {
    const fx = await scheduleFixture(server.url);
    const presenterId = randomUUID();
    for (let i = 0; i < 2; i++) {
      const res = await admin(server.url, 'PUT', `/stations/${fx.station.id}/presenters/${presenterId}`, { title: 'Cleo' });
      expect(res.status).to.equal(200);
      expect(res.body).to.include({ id: presenterId, title: 'Cleo' });
    }
    const programId = randomUUID();
    const body = {
      title: 'Jazz Night',
      description: 'Late',
      profileId: 'jazz',
      presenterIds: [presenterId, fx.presenterId],
      slots: [{ weekday: 5, startTime: '22:00', durationMinutes: 120 }],
    };
    const first = await admin(server.url, 'PUT', `/stations/${fx.station.id}/programs/${programId}`, body);
    const second = await admin(server.url, 'PUT', `/stations/${fx.station.id}/programs/${programId}`, body);
    expect(first.status).to.equal(200);
    expect(second.body).to.deep.include({
      id: programId,
      title: 'Jazz Night',
      description: 'Late',
      profileId: 'jazz',
      presenterIds: [presenterId, fx.presenterId],
      slots: body.slots,
    });
    expect(await server.svc.db('programs').where({ id: programId }).count<{ count: number }[]>('* as count')).to.deep.equal([{ count: 1 }]);
    const replaced = await admin(server.url, 'PUT', `/stations/${fx.station.id}/programs/${programId}`, { title: 'Jazz' });
    expect(replaced.body).to.deep.include({ description: null, profileId: null, presenterIds: [], slots: [] });
  });

  it('"writes are idempotent where the path names the id": the same presenter, program or broadcast PUT twice answers the same object', async () => {
    const fx = await scheduleFixture(server.url);
    const base = `/stations/${fx.station.id}`;
    const presenterId = randomUUID();
    const programId = randomUUID();
    const broadcastId = randomUUID();
    const writes: Array<[path: string, body: Record<string, unknown>]> = [
      [`${base}/presenters/${presenterId}`, { title: 'Cleo' }],
      [
        `${base}/programs/${programId}`,
        { title: 'Jazz', presenterIds: [presenterId.toUpperCase()], slots: [{ weekday: 5, startTime: '22:00', durationMinutes: 120 }] },
      ],
      [
        `${base}/broadcasts/${broadcastId}`,
        { programId: programId.toUpperCase(), startsAt: '2026-06-12T22:00:00+02:00', endsAt: '2026-06-13T00:00:00+02:00', nature: 'live' },
      ],
    ];
    for (const [path, body] of writes) {
      const first = await admin(server.url, 'PUT', path, body);
      expect(first.status, path).to.equal(200);
      await new Promise((resolve) => setTimeout(resolve, 5)); // so a rewrite would show in updatedAt
      const again = await admin(server.url, 'PUT', path, body);
      expect(again.body, path).to.deep.equal(first.body);
    }
    // A real change still moves updatedAt.
    const [path, body] = writes[2];
    const before = await admin(server.url, 'PUT', path, body);
    const changed = await admin(server.url, 'PUT', path, { ...body, title: 'Late Jazz' });
    expect(changed.body).to.include({ title: 'Late Jazz', createdAt: before.body.createdAt });
    expect(changed.body.updatedAt).to.not.equal(before.body.updatedAt);
  });

  it('rejects invalid slots and unknown presenter ids with 400 issues, writing nothing', async () => {
    const fx = await scheduleFixture(server.url);
    const programId = randomUUID();
    const badSlots = await admin(server.url, 'PUT', `/stations/${fx.station.id}/programs/${programId}`, {
      title: 'X',
      slots: [
        { weekday: 8, startTime: '24:00', durationMinutes: 0 },
        { weekday: 1, startTime: '7:00', durationMinutes: 30 },
      ],
    });
    expect(badSlots.status).to.equal(400);
    expect(issuePaths(badSlots.body)).to.include.members([
      'slots.0.weekday',
      'slots.0.startTime',
      'slots.0.durationMinutes',
      'slots.1.startTime',
    ]);
    const missing = randomUUID();
    const badPresenter = await admin(server.url, 'PUT', `/stations/${fx.station.id}/programs/${programId}`, {
      title: 'X',
      presenterIds: [fx.presenterId, missing],
    });
    expect(badPresenter.status).to.equal(400);
    expect(badPresenter.body.error.code).to.equal('VALIDATION_ERROR');
    expect(issuePaths(badPresenter.body)).to.deep.equal(['presenterIds.1']);
    expect(await server.svc.db('programs').where({ id: programId }).first()).to.equal(undefined);
  });

  it('PUT broadcasts: stored object, defaults, cancellation by flag or reason, idempotent', async () => {
    const fx = await scheduleFixture(server.url);
    const id = randomUUID();
    const body = {
      programId: fx.programId,
      startsAt: '2026-06-11T06:00:00+02:00',
      endsAt: '2026-06-11T09:00:00+02:00',
      nature: 'prerecorded',
    };
    const res = await putBroadcastRaw(server.url, fx.station.id, body, id);
    expect(res.status).to.equal(200);
    expect(res.body).to.deep.include({
      id,
      programId: fx.programId,
      title: null,
      startsAt: '2026-06-11T04:00:00.000Z',
      endsAt: '2026-06-11T07:00:00.000Z',
      nature: 'prerecorded',
      published: true,
      cancelled: false,
      cancellationReason: '',
      repeatOfId: null,
      presenterIds: null,
    });
    const again = await putBroadcastRaw(server.url, fx.station.id, body, id);
    expect(again.body.id).to.equal(id);
    expect(await server.svc.db('broadcasts').where({ station_id: fx.station.id }).count<{ count: number }[]>('* as count')).to.deep.equal([
      { count: 1 },
    ]);
    const byReason = await putBroadcastRaw(server.url, fx.station.id, { ...body, cancellationReason: 'Strike' }, id);
    expect(byReason.body).to.include({ cancelled: true, cancellationReason: 'Strike' });
    const byFlag = await putBroadcastRaw(server.url, fx.station.id, { ...body, cancelled: true }, id);
    expect(byFlag.body).to.include({ cancelled: true, cancellationReason: '' });
    const back = await putBroadcastRaw(server.url, fx.station.id, { ...body, cancelled: false, cancellationReason: '' }, id);
    expect(back.body).to.include({ cancelled: false, cancellationReason: '' });
  });

  it('validates broadcasts: endsAt after startsAt, ids that exist, known nature (with a suggestion)', async () => {
    const fx = await scheduleFixture(server.url);
    const base = { programId: fx.programId, startsAt: '2026-06-11T06:00:00Z', endsAt: '2026-06-11T07:00:00Z', nature: 'live' };
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ endsAt: '2026-06-11T06:00:00Z' }, 'endsAt'],
      [{ endsAt: '2026-06-11T05:00:00Z' }, 'endsAt'],
      [{ endsAt: '2026-08-11T05:00:00Z' }, 'endsAt'],
      [{ startsAt: 'yesterday' }, 'startsAt'],
      [{ startsAt: '2026-06-11T06:00:00' }, 'startsAt'],
      [{ programId: randomUUID() }, 'programId'],
      [{ repeatOfId: randomUUID() }, 'repeatOfId'],
      [{ presenterIds: [randomUUID()] }, 'presenterIds.0'],
      [{ presenterIds: [fx.presenterId, fx.presenterId.toUpperCase()] }, 'presenterIds.1'],
      [{ nature: 'Live' }, 'nature'],
      [{ colour: 'red' }, 'colour'],
    ];
    for (const [change, path] of cases) {
      const res = await putBroadcastRaw(server.url, fx.station.id, { ...base, ...change });
      expect(res.status, JSON.stringify(change)).to.equal(400);
      expect(issuePaths(res.body), JSON.stringify(change)).to.include(path);
    }
    const nature = await putBroadcastRaw(server.url, fx.station.id, { ...base, nature: 'prerecordd' });
    expect(nature.body.error.issues[0].suggestion).to.equal('prerecorded');
    const self = randomUUID();
    const selfRepeat = await putBroadcastRaw(server.url, fx.station.id, { ...base, repeatOfId: self }, self);
    expect(issuePaths(selfRepeat.body)).to.include('repeatOfId');
    const missingField = await putBroadcastRaw(server.url, fx.station.id, {
      programId: fx.programId,
      startsAt: base.startsAt,
      nature: 'live',
    });
    expect(issuePaths(missingField.body)).to.include('endsAt');
    expect(await server.svc.db('broadcasts').where({ station_id: fx.station.id }).first()).to.equal(undefined);
  });

  it('guards station ownership: unknown station 404, an id of another station 409, no operator token 401', async () => {
    const a = await scheduleFixture(server.url);
    const b = await scheduleFixture(server.url);
    const unknown = await admin(server.url, 'PUT', `/stations/st_nope/presenters/${randomUUID()}`, { title: 'X' });
    expect(unknown.status).to.equal(404);
    const taken = await admin(server.url, 'PUT', `/stations/${b.station.id}/programs/${a.programId}`, { title: 'Stolen' });
    expect(taken.status).to.equal(409);
    const anonymous = await request(server.url, 'PUT', `/admin/v1/stations/${a.station.id}/presenters/${randomUUID()}`, {
      json: { title: 'X' },
    });
    expect(anonymous.status).to.equal(401);
    const unknownBroadcast = await putRundown(server.url, a.station.id, randomUUID(), []);
    expect(unknownBroadcast.status).to.equal(404);
  });

  it('DELETE broadcasts removes it and its rundown, and is 204 again when already gone', async () => {
    const fx = await scheduleFixture(server.url);
    const id = await putBroadcast(server.url, fx, '2026-06-11T06:00:00Z', '2026-06-11T07:00:00Z');
    expect((await putRundown(server.url, fx.station.id, id, [{ kind: 'talk', title: 'Hello', durationSeconds: 60 }])).status).to.equal(200);
    expect((await admin(server.url, 'DELETE', `/stations/${fx.station.id}/broadcasts/${id}`)).status).to.equal(204);
    expect((await admin(server.url, 'DELETE', `/stations/${fx.station.id}/broadcasts/${id}`)).status).to.equal(204);
    expect(ids(await getSchedule(server.url, fx, '?fromDate=2026-06-11&throughDate=2026-06-11'))).to.deep.equal([]);
    expect(await server.svc.db('rundown_items').where({ broadcast_id: id }).first()).to.equal(undefined);
  });

  describe('PUT …/broadcasts/{id}/rundown', () => {
    it('plans items back-to-back from the broadcast start unless they name their start, and keeps kinds and order', async () => {
      const fx = await scheduleFixture(server.url);
      const id = await putBroadcast(server.url, fx, '2026-06-11T06:00:00Z', '2026-06-11T07:00:00Z');
      const res = await putRundown(server.url, fx.station.id, id, [
        { kind: 'jingle', title: 'Ident', durationSeconds: 10 },
        { kind: 'track', artist: 'Nina Simone', title: 'Sinnerman', durationSeconds: 620.5 },
        { kind: 'talk', title: 'Chat' },
        { kind: 'ad', title: 'Spot', plannedStartsAt: '2026-06-11T08:30:00+02:00', durationSeconds: 30 },
        { kind: 'track', artist: 'A', title: 'B', durationSeconds: 200 },
      ]);
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      expect(res.body.broadcastId).to.equal(id);
      const items = res.body.items as Array<Record<string, unknown>>;
      expect(items.map((i) => [i.index, i.kind, i.plannedStartsAt, i.plannedEndsAt])).to.deep.equal([
        [0, 'jingle', '2026-06-11T06:00:00.000Z', '2026-06-11T06:00:10.000Z'],
        [1, 'track', '2026-06-11T06:00:10.000Z', '2026-06-11T06:10:30.500Z'],
        [2, 'talk', '2026-06-11T06:10:30.500Z', '2026-06-11T06:30:00.000Z'],
        [3, 'ad', '2026-06-11T06:30:00.000Z', '2026-06-11T06:30:30.000Z'],
        [4, 'track', '2026-06-11T06:30:30.000Z', '2026-06-11T06:33:50.000Z'],
      ]);
      expect(items[1]).to.include({ artist: 'Nina Simone', title: 'Sinnerman', durationSeconds: 620.5 });
      expect(items[0]).to.include({ artist: null });
      for (const item of items) expect(item.id).to.match(/^[0-9a-f-]{36}$/);
    });

    it('keeps the stored rundown plan that rundown following reads equal to the items, through every change', async () => {
      const fx = await scheduleFixture(server.url);
      const id = await putBroadcast(server.url, fx, '2026-06-11T06:00:00Z', '2026-06-11T07:00:00Z');
      const plan = async () =>
        ((await server.svc.db('rundown_plans').where({ broadcast_id: id }).first())?.items ?? null) as Array<
          Record<string, unknown>
        > | null;
      const expected = async () =>
        (await server.svc.db('rundown_items').where({ broadcast_id: id }).orderBy('position')).map((i) => ({
          id: i.id,
          position: i.position,
          kind: i.kind,
          artist: i.artist,
          title: i.title,
          duration_seconds: i.duration_seconds,
          starts_ms: i.planned_starts_at.getTime(),
          ends_ms: i.planned_ends_at ? i.planned_ends_at.getTime() : null,
        }));
      const [a, b] = [randomUUID(), randomUUID()];
      await putRundown(server.url, fx.station.id, id, [
        { id: a, kind: 'track', artist: 'X', title: 'A', durationSeconds: 60 },
        { id: b, kind: 'talk', title: 'B' },
      ]);
      expect(await plan()).to.deep.equal(await expected());
      expect((await plan())!.map((i) => i.title)).to.deep.equal(['A', 'B']);
      // Reordered, one dropped, one added, one changed in place.
      await putRundown(server.url, fx.station.id, id, [
        { kind: 'jingle', title: 'New', durationSeconds: 5 },
        { id: a, kind: 'track', artist: 'X', title: 'A (edit)', durationSeconds: 90 },
      ]);
      expect((await plan())!.map((i) => i.title)).to.deep.equal(['New', 'A (edit)']);
      expect(await plan()).to.deep.equal(await expected());
      await putRundown(server.url, fx.station.id, id, []);
      expect(await plan()).to.equal(null);
      await putRundown(server.url, fx.station.id, id, [{ kind: 'talk', title: 'Back', durationSeconds: 10 }]);
      expect((await plan())!.map((i) => i.title)).to.deep.equal(['Back']);
      expect((await admin(server.url, 'DELETE', `/stations/${fx.station.id}/broadcasts/${id}`)).status).to.equal(204);
      expect(await plan()).to.equal(null);
    });

    it('spreads items after one without a duration evenly up to the next named start or the broadcast end', async () => {
      const fx = await scheduleFixture(server.url);
      const id = await putBroadcast(server.url, fx, '2026-06-11T06:00:00Z', '2026-06-11T07:00:00Z');
      const starts = async (items: Array<Record<string, unknown>>) => {
        const res = await putRundown(server.url, fx.station.id, id, items);
        expect(res.status, JSON.stringify(res.body)).to.equal(200);
        return (res.body.items as Array<{ plannedStartsAt: string; plannedEndsAt: string }>).map((i) => [
          i.plannedStartsAt,
          i.plannedEndsAt,
        ]);
      };
      // Titles alone (an acceptance-style minimal rundown): three equal parts of the hour.
      expect(
        await starts([
          { kind: 'track', artist: 'A', title: 'One' },
          { kind: 'track', artist: 'B', title: 'Two' },
          { kind: 'track', artist: 'C', title: 'Three' },
        ]),
      ).to.deep.equal([
        ['2026-06-11T06:00:00.000Z', '2026-06-11T06:20:00.000Z'],
        ['2026-06-11T06:20:00.000Z', '2026-06-11T06:40:00.000Z'],
        ['2026-06-11T06:40:00.000Z', '2026-06-11T07:00:00.000Z'],
      ]);
      // Up to the next item that names its start; back-to-back again after a known duration.
      expect(
        await starts([
          { kind: 'talk', title: 'Open end' },
          { kind: 'track', title: 'Next', durationSeconds: 60 },
          { kind: 'track', title: 'After' },
          { kind: 'ad', title: 'Spot', plannedStartsAt: '2026-06-11T06:30:00Z' },
        ]),
      ).to.deep.equal([
        ['2026-06-11T06:00:00.000Z', '2026-06-11T06:10:00.000Z'],
        ['2026-06-11T06:10:00.000Z', '2026-06-11T06:11:00.000Z'],
        ['2026-06-11T06:11:00.000Z', '2026-06-11T06:30:00.000Z'],
        ['2026-06-11T06:30:00.000Z', '2026-06-11T07:00:00.000Z'],
      ]);
    });

    it('needs a known kind and distinct item ids', async () => {
      const fx = await scheduleFixture(server.url);
      const id = await putBroadcast(server.url, fx, '2026-06-11T06:00:00Z', '2026-06-11T07:00:00Z');
      const kind = await putRundown(server.url, fx.station.id, id, [{ kind: 'song', title: 'X' }]);
      expect(kind.status).to.equal(400);
      expect(kind.body.error.issues[0]).to.include({ path: 'items.0.kind' });
      const dup = randomUUID();
      const twice = await putRundown(server.url, fx.station.id, id, [
        { id: dup, kind: 'talk', title: 'A', durationSeconds: 1 },
        { id: dup, kind: 'talk', title: 'B' },
      ]);
      expect(issuePaths(twice.body)).to.deep.equal(['items.1.id']);
    });

    it('keeps item ids across replacements, drops left-out items, and refuses another broadcast’s item id', async () => {
      const fx = await scheduleFixture(server.url);
      const id = await putBroadcast(server.url, fx, '2026-06-11T06:00:00Z', '2026-06-11T07:00:00Z');
      const [a, b, c] = [randomUUID(), randomUUID(), randomUUID()];
      await putRundown(server.url, fx.station.id, id, [
        { id: a, kind: 'track', title: 'A', durationSeconds: 60 },
        { id: b, kind: 'track', title: 'B', durationSeconds: 60 },
        { id: c, kind: 'track', title: 'C', durationSeconds: 60 },
      ]);
      const reordered = await putRundown(server.url, fx.station.id, id, [
        { id: c, kind: 'track', title: 'C', durationSeconds: 60 },
        { id: a, kind: 'track', title: 'A2', durationSeconds: 60 },
      ]);
      expect(reordered.body.items.map((i: { id: string; index: number; title: string }) => [i.id, i.index, i.title])).to.deep.equal([
        [c, 0, 'C'],
        [a, 1, 'A2'],
      ]);
      expect(await server.svc.db('rundown_items').where({ id: b }).first()).to.equal(undefined);
      const other = await putBroadcast(server.url, fx, '2026-06-11T08:00:00Z', '2026-06-11T09:00:00Z');
      const stolen = await putRundown(server.url, fx.station.id, other, [{ id: a, kind: 'track', title: 'A' }]);
      expect(stolen.status).to.equal(400);
      expect(issuePaths(stolen.body)).to.deep.equal(['items.0.id']);
    });

    it('is idempotent ("writes are idempotent where the path names the id"): the same items without ids keep their ids', async () => {
      const fx = await scheduleFixture(server.url);
      const id = await putBroadcast(server.url, fx, '2026-06-11T06:00:00Z', '2026-06-11T07:00:00Z');
      const items = [
        { kind: 'track', artist: 'A', title: 'One', durationSeconds: 180 },
        { kind: 'talk', title: 'Chat', durationSeconds: 60 },
      ];
      const first = await putRundown(server.url, fx.station.id, id, items);
      const again = await putRundown(server.url, fx.station.id, id.toUpperCase(), items);
      expect(first.status).to.equal(200);
      expect(again.body).to.deep.equal(first.body);
      // An item that changed at its index is a new item; one that names a current id keeps that id.
      const [, chat] = first.body.items as Array<{ id: string }>;
      const changed = await putRundown(server.url, fx.station.id, id, [
        { ...items[0], title: 'Two' },
        { id: chat.id, ...items[1] },
      ]);
      expect(changed.body.items[0].id).to.not.equal(first.body.items[0].id);
      expect(changed.body.items[1].id).to.equal(chat.id);
    });

    it('moves the rundown along when the broadcast moves', async () => {
      const fx = await scheduleFixture(server.url);
      const id = await putBroadcast(server.url, fx, '2026-06-11T06:00:00Z', '2026-06-11T07:00:00Z');
      await putRundown(server.url, fx.station.id, id, [
        { kind: 'talk', title: 'Intro', durationSeconds: 120 },
        { kind: 'track', title: 'Song', durationSeconds: 180 },
      ]);
      await putBroadcast(server.url, fx, '2026-06-11T08:00:00Z', '2026-06-11T09:30:00Z', {}, id);
      const rows = await server.svc.db('rundown_items').where({ broadcast_id: id }).orderBy('position');
      expect(rows.map((r: { planned_starts_at: Date }) => r.planned_starts_at.toISOString())).to.deep.equal([
        '2026-06-11T08:00:00.000Z',
        '2026-06-11T08:02:00.000Z',
      ]);
      expect(rows[1].planned_ends_at.toISOString()).to.equal('2026-06-11T08:05:00.000Z');
    });
  });
});
