import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { admin, request } from '../../support/http.ts';
import { createToken } from '../../support/factories.ts';
import { ManualClock } from '../../../src/lib/clock.ts';
import { fireDue, fireJobId, tick } from '../../../src/domains/reminders/fire.ts';
import { fillTemplate } from '../../../src/domains/reminders/body.ts';
import { countsAddUp, pushStation, startPushWorld, type PushWorld } from '../push/sendHelpers.ts';
import { scheduleOf } from './scheduleHelpers.ts';

// docs/push.md#follows-and-reminders: who is reminded of which broadcast and when, what the message
// says, and how the reminder follows the schedule (moved, unpublished, cancelled, removed, late). The
// web app and its workers run on a ManualClock; the due instants are reached by setting it and firing
// what is due (the worker's tick reads the same clock, so whichever fires first, the result is one).

const MIN = 60_000;

describe('reminders', function () {
  this.timeout(60_000);
  // Whole hours ahead of the wall clock, so the FCM fake's token times stay sane.
  const base = Math.ceil(Date.now() / 3600_000) * 3600_000 + 2 * 3600_000;
  const clock = new ManualClock(base - 3 * 3600_000);
  let world: PushWorld;
  before(async () => (world = await startPushWorld({}, { clock })));
  after(() => world.close());

  /** A station on the FCM fake with `n` registered devices, a program, and helpers to follow and look. */
  async function fixture(n = 1, overrides: Record<string, unknown> = {}) {
    const s = await pushStation(world, 'fcm', { name: 'Radio Test', timezone: 'Europe/Berlin', ...overrides });
    const devices = Array.from({ length: n }, () => `fcm-rem-${randomUUID()}`);
    for (const d of devices) await s.register(d);
    const { token } = await createToken(world.server.url, s.station.id, ['push:register']);
    const schedule = scheduleOf(world.server.url, s.station.id);
    const follow = async (device: string, follows: unknown[]) => {
      const res = await request(world.server.url, 'PUT', `/api/v1/stations/${s.station.slug}/push/follows`, {
        token,
        json: { token: device, follows },
      });
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
    };
    /**
     * Fires what is due at `instant` (after the clock is set there) and waits until the station's
     * reminders are sent (a later jump of the clock would otherwise expire one still sending).
     */
    const at = async (instant: number) => {
      clock.set(instant);
      await fireDue(world.server.svc);
      const ids: string[] = await world.server.svc.db('push_notifications').where({ station_id: s.station.id }).pluck('id');
      for (const id of ids) await s.finished(id);
    };
    const reminders = async (broadcastId: string) => {
      const rows = await world.server.svc.db('push_notifications').where({ broadcast_id: broadcastId }).orderBy('due_at').select('id');
      return Promise.all(rows.map((r: { id: string }) => s.finished(r.id)));
    };
    const messagesTo = (device: string) => world.fcm.sent.filter((m) => m.token === device);
    return { ...s, devices, schedule, follow, at, reminders, messagesTo };
  }

  it('a program’s follower is reminded at startsAt − remindBeforeMinutes, not before: title, body, data, topic, urgent; the admin view', async () => {
    const f = await fixture(2);
    const anna = await f.schedule.presenter('Anna');
    const bob = await f.schedule.presenter('Bob');
    const program = await f.schedule.program('Morning Show', [anna, bob]);
    const startsAt = base + 30 * MIN;
    const broadcast = await f.schedule.broadcast(program, new Date(startsAt));
    await f.follow(f.devices[0], [{ programId: program, remindBeforeMinutes: 10 }]);
    await f.at(startsAt - 10 * MIN - 1000);
    expect(await f.reminders(broadcast)).to.deep.equal([]);
    await f.at(startsAt - 10 * MIN);
    const [view] = await f.reminders(broadcast);
    expect(view).to.include({ topic: 'reminders', source: 'reminder', broadcastId: broadcast, title: 'Morning Show', status: 'done' });
    const local = new Date(startsAt).toLocaleTimeString('en-GB', { timeZone: 'Europe/Berlin', hour: '2-digit', minute: '2-digit' });
    expect(view.body).to.equal(`Starts at ${local} on Radio Test`);
    expect(view.counts).to.deep.equal({ targeted: 1, sent: 1, failed: 0, pruned: 0, pending: 0 });
    const [message] = f.messagesTo(f.devices[0]);
    expect(message.body.message.notification).to.deep.equal({ title: 'Morning Show', body: `Starts at ${local} on Radio Test` });
    expect(message.body.message.data).to.deep.equal({
      type: 'reminder',
      programId: program,
      broadcastId: broadcast,
      startsAt: new Date(startsAt).toISOString(),
      notificationId: view.id,
      topic: 'reminders',
    });
    expect(message.body.message.android.priority).to.equal('HIGH');
    // Not a follower: nothing.
    expect(f.messagesTo(f.devices[1])).to.deep.equal([]);
    // In the admin list, like any notification.
    const list = await admin(world.server.url, 'GET', `/stations/${f.station.id}/push/notifications`);
    expect(list.body.notifications.map((n: { id: string }) => n.id)).to.deep.equal([view.id]);
    // At the start, a remindBeforeMinutes 0 follower gets `body` ("Starts now…").
    await f.follow(f.devices[1], [{ programId: program }]);
    await f.at(startsAt);
    const views = await f.reminders(broadcast);
    expect(views.map((v) => v.body)).to.deep.equal([`Starts at ${local} on Radio Test`, 'Starts now on Radio Test']);
    expect(f.messagesTo(f.devices[0])).to.have.length(1);
    expect(f.messagesTo(f.devices[1])).to.have.length(1);
  });

  it('one reminder per device per broadcast, at the earliest due time; presenters are the broadcast’s presenterIds, by default its program’s', async () => {
    const f = await fixture(3);
    const anna = await f.schedule.presenter('Anna');
    const bob = await f.schedule.presenter('Bob');
    const program = await f.schedule.program('Talk', [anna]);
    const startsAt = base + 50 * MIN;
    const byDefault = await f.schedule.broadcast(program, new Date(startsAt));
    const overridden = await f.schedule.broadcast(program, new Date(startsAt + 60 * MIN), { presenterIds: [bob] });
    const [both, annaFan, bobFan] = f.devices;
    await f.follow(both, [{ programId: program }, { presenterId: anna, remindBeforeMinutes: 30 }]);
    await f.follow(annaFan, [{ presenterId: anna, remindBeforeMinutes: 5 }]);
    await f.follow(bobFan, [{ presenterId: bob }]);
    for (const t of [startsAt - 30 * MIN, startsAt - 5 * MIN, startsAt, startsAt + 30 * MIN, startsAt + 60 * MIN]) await f.at(t);
    const first = await f.reminders(byDefault);
    expect(first.map((v) => [v.counts.targeted, new Date(v.createdAt).getTime()])).to.deep.equal([
      [1, startsAt - 30 * MIN],
      [1, startsAt - 5 * MIN],
    ]);
    const second = await f.reminders(overridden);
    // The overriding broadcast has Bob, not Anna: `both` by its program follow (0), bobFan by Bob.
    expect(second.map((v) => [v.counts.targeted, new Date(v.createdAt).getTime()])).to.deep.equal([[2, startsAt + 60 * MIN]]);
    expect(f.messagesTo(both).map((m) => m.body.message.data.broadcastId)).to.deep.equal([byDefault, overridden]);
    expect(f.messagesTo(annaFan).map((m) => m.body.message.data.broadcastId)).to.deep.equal([byDefault]);
    expect(f.messagesTo(bobFan).map((m) => m.body.message.data.broadcastId)).to.deep.equal([overridden]);
    // {presenters} comes from the same list (template test below); the title is the program's.
    expect(second[0].title).to.equal('Talk');
  });

  it('the device’s alerts/content topics do not gate reminders; a station without push configured sends none', async () => {
    const f = await fixture(1);
    const program = await f.schedule.program('Night');
    const startsAt = base + 70 * MIN;
    const broadcast = await f.schedule.broadcast(program, new Date(startsAt));
    const res = await request(world.server.url, 'PATCH', `/api/v1/stations/${f.station.slug}/push/devices`, {
      token: (await createToken(world.server.url, f.station.id, ['push:register'])).token,
      json: { token: f.devices[0], topics: { alerts: false, content: false } },
    });
    expect(res.status).to.equal(200);
    await f.follow(f.devices[0], [{ programId: program }]);
    await f.at(startsAt);
    expect((await f.reminders(broadcast)).map((v) => v.counts.sent)).to.deep.equal([1]);

    const g = await fixture(1);
    const other = await g.schedule.program('Other');
    const later = await g.schedule.broadcast(other, new Date(startsAt + 5 * MIN));
    await g.follow(g.devices[0], [{ programId: other }]);
    expect((await admin(world.server.url, 'DELETE', `/stations/${g.station.id}/push/credentials`)).status).to.equal(204);
    await g.at(startsAt + 5 * MIN);
    expect(await g.reminders(later)).to.deep.equal([]);
  });

  it('a broadcast moved before its reminder moves it; one unpublished, cancelled or removed drops it', async () => {
    const f = await fixture(1);
    const program = await f.schedule.program('News');
    const startsAt = base + 90 * MIN;
    const moved = await f.schedule.broadcast(program, new Date(startsAt));
    const unpublished = await f.schedule.broadcast(program, new Date(startsAt + 60 * MIN));
    const cancelled = await f.schedule.broadcast(program, new Date(startsAt + 120 * MIN));
    const removed = await f.schedule.broadcast(program, new Date(startsAt + 180 * MIN));
    await f.follow(f.devices[0], [{ programId: program, remindBeforeMinutes: 5 }]);
    await f.schedule.broadcast(program, new Date(startsAt + 20 * MIN), {}, moved);
    await f.schedule.broadcast(program, new Date(startsAt + 60 * MIN), { published: false }, unpublished);
    await f.schedule.broadcast(program, new Date(startsAt + 120 * MIN), { cancellationReason: 'Football' }, cancelled);
    expect((await f.schedule.remove(`/broadcasts/${removed}`)).status).to.equal(204);
    await f.at(startsAt - 5 * MIN);
    expect(await f.reminders(moved)).to.deep.equal([]);
    await f.at(startsAt + 15 * MIN);
    expect((await f.reminders(moved)).map((v) => new Date(v.createdAt).getTime())).to.deep.equal([startsAt + 15 * MIN]);
    for (const t of [55, 60, 115, 120, 175, 180]) await f.at(startsAt + t * MIN);
    expect(await f.reminders(unpublished)).to.deep.equal([]);
    expect(await f.reminders(cancelled)).to.deep.equal([]);
    expect(await f.reminders(removed)).to.deep.equal([]);
    expect(f.messagesTo(f.devices[0])).to.have.length(1);
  });

  it('a due instant already past (created or moved late) is sent at once, until startsAt + 5 min; after that it is dropped', async () => {
    const f = await fixture(1);
    const program = await f.schedule.program('Late');
    await f.follow(f.devices[0], [{ programId: program, remindBeforeMinutes: 30 }]);
    const startsAt = base + 300 * MIN;
    clock.set(startsAt - 2 * MIN);
    const soon = await f.schedule.broadcast(program, new Date(startsAt));
    await f.at(startsAt - 2 * MIN);
    const [view] = await f.reminders(soon);
    expect(view.counts.sent).to.equal(1);
    // Due 30 minutes before; the body still says when it starts.
    expect(view.body).to.match(/^Starts at \d\d:\d\d on Radio Test$/);
    clock.set(startsAt + 4 * MIN);
    const stillOn = await f.schedule.broadcast(program, new Date(startsAt));
    await f.at(startsAt + 4 * MIN);
    expect((await f.reminders(stillOn)).map((v) => v.counts.sent)).to.deep.equal([1]);
    clock.set(startsAt + 6 * MIN);
    const halfOver = await f.schedule.broadcast(program, new Date(startsAt));
    await f.at(startsAt + 6 * MIN);
    expect(await f.reminders(halfOver)).to.deep.equal([]);
    // Moved late: sent at once, in the new place.
    const movedLate = await f.schedule.broadcast(program, new Date(startsAt + 600 * MIN));
    await f.schedule.broadcast(program, new Date(startsAt + 8 * MIN), {}, movedLate);
    await f.at(startsAt + 6 * MIN);
    expect((await f.reminders(movedLate)).map((v) => v.counts.sent)).to.deep.equal([1]);
  });

  it('at most once per (device, broadcast) across edits: moved after its reminder went out, it is not sent again; two workers firing at once make one notification', async () => {
    const f = await fixture(20);
    const program = await f.schedule.program('Once');
    const startsAt = base + 400 * MIN;
    const broadcast = await f.schedule.broadcast(program, new Date(startsAt));
    for (const d of f.devices) await f.follow(d, [{ programId: program, remindBeforeMinutes: 15 }]);
    clock.set(startsAt - 15 * MIN);
    // Two firings at once (as two workers would): the unique (broadcast, due time) lets one through.
    const [a, b] = await Promise.all([fireDue(world.server.svc, f.station.id), fireDue(world.server.svc, f.station.id)]);
    const [view] = await f.reminders(broadcast);
    expect(a.length + b.length).to.be.at.most(1);
    expect(view.counts.targeted).to.equal(20);
    countsAddUp(view);
    await f.schedule.broadcast(program, new Date(startsAt + 30 * MIN), {}, broadcast);
    for (const t of [15, 30, 35]) await f.at(startsAt + t * MIN);
    expect(await f.reminders(broadcast)).to.have.length(1);
    for (const d of f.devices) expect(f.messagesTo(d), d).to.have.length(1);
  });

  it('the tick fires what is due and plans a reminders.fire job at each due instant of the next minute', async () => {
    const f = await fixture(1);
    const program = await f.schedule.program('Planned');
    const startsAt = base + 500 * MIN;
    await f.schedule.broadcast(program, new Date(startsAt));
    await f.follow(f.devices[0], [{ programId: program }]);
    clock.set(startsAt - 40_000);
    const planned = await tick(world.server.svc);
    expect(planned.planned).to.be.at.least(1);
    const job = await world.server.svc.jobs.queue('push').getJob(fireJobId(f.station.id, new Date(startsAt)));
    expect(job?.data).to.deep.equal({ stationId: f.station.id, at: new Date(startsAt).toISOString() });
    await job?.remove().catch(() => undefined);
  });

  it('the station setting reminders: defaults in the admin view; a PATCH replaces it (absent fields take their defaults); bad values 400', async () => {
    const f = await fixture(0);
    const path = `/stations/${f.station.id}`;
    expect((await admin(world.server.url, 'GET', path)).body.reminders).to.deep.equal({
      enabled: true,
      body: 'Starts now on {station}',
      bodySoon: 'Starts at {time} on {station}',
    });
    const first = await admin(world.server.url, 'PATCH', path, { reminders: { body: '{program} now', bodySoon: 'x' } });
    expect(first.status, JSON.stringify(first.body)).to.equal(200);
    const replaced = await admin(world.server.url, 'PATCH', path, { reminders: { bodySoon: 'In {minutes} min' } });
    expect(replaced.body.reminders).to.deep.equal({ enabled: true, body: 'Starts now on {station}', bodySoon: 'In {minutes} min' });
    for (const bad of [{ enabled: 'yes' }, { body: '' }, { bodie: 'x' }]) {
      const res = await admin(world.server.url, 'PATCH', path, { reminders: bad });
      expect(res.status, JSON.stringify(bad)).to.equal(400);
      expect(res.body.error.issues[0].path).to.match(/^reminders/);
    }
  });

  it('the reminder’s body is the station’s template ({program}, {presenters}, {minutes}); reminders.enabled false sends none', async () => {
    const f = await fixture(1);
    const anna = await f.schedule.presenter('Anna');
    const bob = await f.schedule.presenter('Bob');
    const program = await f.schedule.program('Jazz', [anna, bob]);
    const startsAt = base + 600 * MIN;
    const broadcast = await f.schedule.broadcast(program, new Date(startsAt));
    await f.follow(f.devices[0], [{ programId: program, remindBeforeMinutes: 15 }]);
    const patch = (reminders: unknown) => admin(world.server.url, 'PATCH', `/stations/${f.station.id}`, { reminders });
    expect((await patch({ bodySoon: '{program} with {presenters} in {minutes} min on {station}' })).status).to.equal(200);
    await f.at(startsAt - 15 * MIN);
    const [view] = await f.reminders(broadcast);
    expect(view.body).to.equal('Jazz with Anna, Bob in 15 min on Radio Test');
    expect(f.messagesTo(f.devices[0])[0].body.message.notification.body).to.equal('Jazz with Anna, Bob in 15 min on Radio Test');
    const later = await f.schedule.broadcast(program, new Date(startsAt + 60 * MIN));
    expect((await patch({ enabled: false })).status).to.equal(200);
    await f.at(startsAt + 45 * MIN);
    expect(await f.reminders(later)).to.deep.equal([]);
  });

  it('an import bundle’s station carries the reminders setting', async () => {
    const res = await admin(world.server.url, 'POST', '/import', {
      station: {
        slug: `rem-imp-${randomUUID().slice(0, 8)}`,
        name: 'Imported FM',
        timezone: 'UTC',
        reminders: { enabled: false, body: 'On air: {program}' },
      },
    });
    expect(res.status, JSON.stringify(res.body)).to.equal(201);
    expect(res.body.station.reminders).to.deep.equal({
      enabled: false,
      body: 'On air: {program}',
      bodySoon: 'Starts at {time} on {station}',
    });
  });

  it('templates: {program}, {presenters} joined with ", ", {station}, {time} station-local HH:mm, {minutes}; other braces stay', () => {
    const facts = {
      program: 'Jazz',
      presenters: ['Anna', 'Bob'],
      station: 'Radio',
      timezone: 'America/New_York',
      startsAt: new Date('2026-07-01T18:05:00Z'),
      minutes: 15,
    };
    expect(fillTemplate('{program} with {presenters} on {station} at {time}, in {minutes} min {unknown}', facts)).to.equal(
      'Jazz with Anna, Bob on Radio at 14:05, in 15 min {unknown}',
    );
  });
});
