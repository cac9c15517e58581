import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { useClockedServer } from '../../support/server.ts';
import { admin, request } from '../../support/http.ts';
import { createStation, createToken } from '../../support/factories.ts';
import { scheduleOf } from './scheduleHelpers.ts';

// docs/push.md#following-for-station-app-developers: PUT …/push/follows (validation, replace, clear, unknown
// device), the cascade on unregister and on removing a program or presenter (the admin DELETE routes),
// and the operators' follower counts.

describe('push follows …/push/follows', () => {
  const { server } = useClockedServer('2026-11-21T12:00:00.000Z');

  async function fixture(overrides: Record<string, unknown> = {}) {
    const station = await createStation(server.url, { push: { provider: 'fcm' }, ...overrides });
    const { token } = await createToken(server.url, station.id, ['push:register']);
    const schedule = scheduleOf(server.url, station.id);
    const device = `fcm-follow-${randomUUID()}`;
    const devices = (method: string, json: unknown) =>
      request(server.url, method, `/api/v1/stations/${station.slug}/push/devices`, { token, json });
    expect((await devices('POST', { token: device, platform: 'android', provider: 'fcm' })).status).to.equal(200);
    const follow = (follows: unknown, as = device, credential: string | undefined = token) =>
      request(server.url, 'PUT', `/api/v1/stations/${station.slug}/push/follows`, { token: credential, json: { token: as, follows } });
    const counts = async () => (await admin(server.url, 'GET', `/stations/${station.id}/push/follows`)).body;
    return { station, token, schedule, device, devices, follow, counts };
  }

  it('stores the follows as given (remindBeforeMinutes defaults to 0) and answers them; a PUT replaces them; [] clears them', async () => {
    const { schedule, follow, counts } = await fixture();
    const anna = await schedule.presenter('Anna');
    const morning = await schedule.program('Morning', [anna]);
    const jazz = await schedule.program('Jazz');
    const res = await follow([{ programId: morning }, { presenterId: anna, remindBeforeMinutes: 15 }]);
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    expect(res.body).to.deep.equal({
      follows: [
        { programId: morning, remindBeforeMinutes: 0 },
        { presenterId: anna, remindBeforeMinutes: 15 },
      ],
    });
    const replaced = await follow([{ programId: jazz, remindBeforeMinutes: 60 }]);
    expect(replaced.body).to.deep.equal({ follows: [{ programId: jazz, remindBeforeMinutes: 60 }] });
    expect(await counts()).to.deep.equal({ programs: [{ programId: jazz, title: 'Jazz', followers: 1 }], presenters: [] });
    expect((await follow([])).body).to.deep.equal({ follows: [] });
    expect(await counts()).to.deep.equal({ programs: [], presenters: [] });
  });

  it('400 naming the index: unknown program or presenter, another station’s, the later of a duplicate, neither or both ids', async () => {
    const { schedule, follow } = await fixture();
    const other = await fixture();
    const mine = await schedule.program('Mine');
    const anna = await schedule.presenter('Anna');
    const theirs = await other.schedule.program('Theirs');
    const cases: Array<[unknown[], string, string]> = [
      [[{ programId: mine }, { programId: randomUUID() }], 'follows.1', 'unknown_id'],
      [[{ presenterId: randomUUID() }], 'follows.0', 'unknown_id'],
      [[{ programId: mine }, { programId: theirs }], 'follows.1', 'unknown_id'],
      [[{ presenterId: anna }, { programId: mine }, { presenterId: anna, remindBeforeMinutes: 5 }], 'follows.2', 'duplicate'],
      [[{ programId: mine }, { programId: mine.toUpperCase() }], 'follows.1', 'duplicate'],
      [[{ remindBeforeMinutes: 5 }], 'follows.0', 'invalid_value'],
      [[{ programId: mine, presenterId: anna }], 'follows.0', 'invalid_value'],
    ];
    for (const [follows, path, code] of cases) {
      const res = await follow(follows);
      expect(res.status, JSON.stringify(follows)).to.equal(400);
      expect(res.body.error.code).to.equal('VALIDATION_ERROR');
      expect(res.body.error.issues, JSON.stringify(res.body)).to.deep.include.members([{ ...res.body.error.issues[0], path, code }]);
      expect(res.body.error.issues).to.have.length(1);
    }
    // Nothing was stored by a refused PUT.
    expect((await follow([{ programId: mine }])).body.follows).to.have.length(1);
  });

  it('400 for remindBeforeMinutes outside 0, 5, 10, 15, 30, 60 and for more than 100 follows', async () => {
    const { schedule, follow } = await fixture();
    const mine = await schedule.program('Mine');
    const odd = await follow([{ programId: mine, remindBeforeMinutes: 7 }]);
    expect(odd.status).to.equal(400);
    expect(odd.body.error.issues[0].path).to.equal('follows.0.remindBeforeMinutes');
    const many = await follow(Array.from({ length: 101 }, () => ({ programId: randomUUID() })));
    expect(many.status).to.equal(400);
    expect(many.body.error.issues[0].path).to.equal('follows');
    const hundred = Array.from({ length: 100 }, (_, i) => i);
    const programs = [];
    for (const i of hundred) programs.push(await schedule.program(`P${i}`));
    const ok = await follow(programs.map((programId) => ({ programId })));
    expect(ok.status, JSON.stringify(ok.body)).to.equal(200);
    expect(ok.body.follows).to.have.length(100);
  });

  it('an unknown device → 404 (as PATCH topics answers); gates: 401 without the credential, 404 MODULE_DISABLED with push off', async () => {
    const { schedule, follow, station } = await fixture();
    const mine = await schedule.program('Mine');
    const unknown = await follow([{ programId: mine }], 'never-registered');
    expect(unknown.status).to.equal(404);
    expect(unknown.body.error.code).to.equal('NOT_FOUND');
    expect((await follow([{ programId: mine }], undefined, 'wrong')).status).to.equal(401);
    expect((await admin(server.url, 'PATCH', `/stations/${station.id}`, { modules: { push: false } })).status).to.equal(200);
    const off = await follow([{ programId: mine }]);
    expect(off.status).to.equal(404);
    expect(off.body.error.code).to.equal('MODULE_DISABLED');
  });

  it('unregistering the device removes its follows', async () => {
    const { schedule, follow, devices, device, counts } = await fixture();
    const mine = await schedule.program('Mine');
    await follow([{ programId: mine }]);
    expect((await counts()).programs[0].followers).to.equal(1);
    expect((await devices('DELETE', { token: device })).status).to.equal(200);
    expect(await counts()).to.deep.equal({ programs: [], presenters: [] });
    // Registered again, it starts with no follows.
    await devices('POST', { token: device, platform: 'android', provider: 'fcm' });
    expect(await counts()).to.deep.equal({ programs: [], presenters: [] });
  });

  it('DELETE …/programs/{uuid}: 409 PROGRAM_IN_USE naming how many broadcasts reference it; else 204, its follows gone; audited', async () => {
    const { schedule, follow, counts, station } = await fixture();
    const used = await schedule.program('Used');
    const spare = await schedule.program('Spare');
    await schedule.broadcast(used, new Date('2026-11-22T10:00:00Z'));
    await schedule.broadcast(used, new Date('2026-11-23T10:00:00Z'));
    await follow([{ programId: used }, { programId: spare }]);
    const inUse = await schedule.remove(`/programs/${used}`);
    expect(inUse.status).to.equal(409);
    expect(inUse.body.error.code).to.equal('PROGRAM_IN_USE');
    expect(inUse.body.error.message).to.match(/\b2 broadcasts\b/);
    expect((await schedule.remove(`/programs/${spare}`)).status).to.equal(204);
    expect((await counts()).programs.map((p: { programId: string }) => p.programId)).to.deep.equal([used]);
    expect((await admin(server.url, 'GET', `/stations/${station.id}/programs/${spare}`)).status).to.not.equal(200);
    // Idempotent: 204 when it is gone already.
    expect((await schedule.remove(`/programs/${spare}`)).status).to.equal(204);
    const audit = await admin(server.url, 'GET', `/stations/${station.id}/audit?action=schedule.program-delete`);
    expect(audit.status, JSON.stringify(audit.body)).to.equal(200);
    expect(audit.body.entries.map((e: { status: number }) => e.status).sort()).to.deep.equal([204, 204, 409]);
  });

  it('DELETE …/presenters/{uuid}: 204; taken off every program’s and broadcast’s presenter list; its follows gone', async () => {
    const { schedule, follow, counts, station } = await fixture();
    const anna = await schedule.presenter('Anna');
    const bob = await schedule.presenter('Bob');
    const show = await schedule.program('Show', [anna, bob]);
    const broadcast = await schedule.broadcast(show, new Date('2026-11-22T10:00:00Z'), { presenterIds: [bob, anna] });
    await follow([{ presenterId: anna }, { presenterId: bob }]);
    expect((await schedule.remove(`/presenters/${anna}`)).status).to.equal(204);
    expect((await counts()).presenters.map((p: { presenterId: string }) => p.presenterId)).to.deep.equal([bob]);
    const row = await server.svc.db('broadcasts').where({ id: broadcast }).first('presenter_ids');
    expect(row.presenter_ids).to.deep.equal([bob]);
    const lists = await server.svc.db('program_presenters').where({ program_id: show }).pluck('presenter_id');
    expect(lists).to.deep.equal([bob]);
    expect((await schedule.remove(`/presenters/${anna}`)).status).to.equal(204);
    // Another station's presenter is not touched.
    const other = await fixture();
    const carol = await other.schedule.presenter('Carol');
    expect((await admin(server.url, 'DELETE', `/stations/${station.id}/presenters/${carol}`)).status).to.equal(204);
    expect(await server.svc.db('presenters').where({ id: carol }).first('id')).to.not.equal(undefined);
  });

  it('GET …/push/follows counts devices per program and presenter, most followed first; 404 for an unknown station', async () => {
    const { schedule, follow, counts, devices } = await fixture();
    const anna = await schedule.presenter('Anna');
    const a = await schedule.program('A');
    const b = await schedule.program('B');
    await follow([{ programId: a }, { presenterId: anna }]);
    const second = `fcm-follow-${randomUUID()}`;
    await devices('POST', { token: second, platform: 'android', provider: 'fcm' });
    await follow([{ programId: b }, { programId: a }], second);
    expect(await counts()).to.deep.equal({
      programs: [
        { programId: a, title: 'A', followers: 2 },
        { programId: b, title: 'B', followers: 1 },
      ],
      presenters: [{ presenterId: anna, name: 'Anna', followers: 1 }],
    });
    expect((await admin(server.url, 'GET', `/stations/nope-${randomUUID()}/push/follows`)).status).to.equal(404);
  });
});
