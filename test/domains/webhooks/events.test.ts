import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { admin } from '../../support/http.ts';
import { eventually } from '../../support/factories.ts';
import { ingest, ingestFixture } from '../../support/ingest.ts';
import { startReceiver, type Receiver } from '../../support/receiver.ts';
import { useSharedServerWithWorkers } from '../../support/server.ts';
import { contentFixture, putRecord, publish, published } from '../content/helpers.ts';
import { putBroadcast, putBroadcastRaw, scheduleFixture } from '../schedule/helpers.ts';
import { arrived, createHook, verifyingSignatures } from './helpers.ts';

// docs/webhooks.md#events: each event type from its real write, after commit, one per change, signed.

describe('webhooks: events from their writes', () => {
  const { server } = useSharedServerWithWorkers();
  let receiver: Receiver;
  before(async () => {
    receiver = await startReceiver();
  });
  after(() => receiver.close());
  const forStation = (stationId: string, type: string) => receiver.ofType(type).filter((r) => r.json.stationId === stationId);

  it('now-playing.changed carries the now-playing body, signed in the Standard Webhooks form; a collapsed repeat sends nothing', async () => {
    const { station, ingestToken, listenerToken } = await ingestFixture(server.url, { rundownFollowing: false });
    const hook = await createHook(server.url, station.id, receiver.url, ['now-playing.changed']);
    const res = await ingest(server.url, station, ingestToken, { artist: 'Nina, "Simone"', title: 'Feeling Good', isPlaying: true });
    expect(res.status).to.equal(200);
    const [delivery] = await arrived(() => forStation(station.id, 'now-playing.changed'));
    expect(delivery.headers['content-type']).to.equal('application/json');
    expect(String(delivery.headers['webhook-id'])).to.match(/^evt_/);
    expect(Math.abs(Number(delivery.headers['webhook-timestamp']) - Date.now() / 1000)).to.be.below(30);
    expect(verifyingSignatures(hook.secret, delivery)).to.equal(1);
    expect(delivery.json.stationId).to.equal(station.id);
    expect(Date.parse(delivery.json.timestamp)).to.be.above(0);
    const np: any = await (
      await fetch(`${server.url}/api/v1/stations/${station.slug}/now-playing`, { headers: { authorization: `Bearer ${listenerToken}` } })
    ).json();
    expect(delivery.json.data.track).to.deep.equal(np.track);
    // The same track again within the collapse window changes nothing: no second event. A new track makes one.
    await ingest(server.url, station, ingestToken, { artist: 'Nina, "Simone"', title: 'Feeling Good', isPlaying: true });
    await ingest(server.url, station, ingestToken, { artist: 'Other', title: 'Next', isPlaying: true });
    await eventually(() => forStation(station.id, 'now-playing.changed').some((r) => r.json.data.track?.title === 'Next'));
    expect(forStation(station.id, 'now-playing.changed')).to.have.length(2);
  });

  it('content.published and content.unpublished carry {type, id, revision}; a refused publish (rolled back) sends nothing', async () => {
    const { station } = await contentFixture(server);
    await createHook(server.url, station.id, receiver.url, ['content.published', 'content.unpublished']);
    // Missing a required field: the publish is refused and its transaction never commits.
    const refusedId = randomUUID();
    expect((await putRecord(server.url, station.id, refusedId, { type: 'news', values: { slug: 'x' } })).status).to.equal(200);
    expect((await publish(server.url, station.id, refusedId)).status).to.equal(400);
    const id = await published(server.url, station.id, 'news', { title: 'Hello' });
    const [pub] = await arrived(() => forStation(station.id, 'content.published'));
    expect(pub.json.data).to.deep.equal({ type: 'news', id, revision: 1 });
    expect((await admin(server.url, 'POST', `/stations/${station.id}/records/${id}/unpublish`)).status).to.equal(200);
    const [unpub] = await arrived(() => forStation(station.id, 'content.unpublished'));
    expect(unpub.json.data).to.deep.equal({ type: 'news', id, revision: 1 });
    // Unpublishing again changes nothing and sends nothing; the refused record never produced an event.
    expect((await admin(server.url, 'POST', `/stations/${station.id}/records/${id}/unpublish`)).status).to.equal(200);
    const again = await published(server.url, station.id, 'news', { title: 'Sentinel' });
    await eventually(() => forStation(station.id, 'content.published').some((r) => r.json.data.id === again));
    expect(forStation(station.id, 'content.unpublished')).to.have.length(1);
    expect(forStation(station.id, 'content.published').map((r) => r.json.data.id)).to.have.members([id, again]);
  });

  it('schedule.changed names the affected local dates; broadcast.started and broadcast.ended carry the broadcast as in schedule', async () => {
    const fx = await scheduleFixture(server.url, { timezone: 'Europe/Berlin' });
    await createHook(server.url, fx.station.id, receiver.url, ['schedule.changed', 'broadcast.started', 'broadcast.ended']);
    // A future broadcast crossing local midnight (Berlin, winter: UTC+1).
    await putBroadcast(server.url, fx, '2031-01-14T22:30:00Z', '2031-01-15T01:00:00Z');
    const [changed] = await arrived(() => forStation(fx.station.id, 'schedule.changed'));
    expect(changed.json.data).to.deep.equal({ fromDate: '2031-01-14', throughDate: '2031-01-15' });
    expect(forStation(fx.station.id, 'broadcast.started')).to.have.length(0);

    // A broadcast live now: started, with the schedule shape.
    const now = Date.now();
    const live = await putBroadcast(server.url, fx, new Date(now - 60_000).toISOString(), new Date(now + 3600_000).toISOString());
    const [started] = await arrived(() => forStation(fx.station.id, 'broadcast.started'));
    expect(started.json.data).to.include({ id: live, status: 'live', timezone: 'Europe/Berlin', title: 'Morning Show' });
    expect(started.json.data.program.id).to.equal(fx.programId);
    expect(started.json.data.presenters).to.have.length(1);
    // Cut short: it ended.
    const cut = await putBroadcastRaw(
      server.url,
      fx.station.id,
      {
        programId: fx.programId,
        startsAt: new Date(now - 60_000).toISOString(),
        endsAt: new Date(now - 1000).toISOString(),
        nature: 'live',
      },
      live,
    );
    expect(cut.status).to.equal(200);
    const [ended] = await arrived(() => forStation(fx.station.id, 'broadcast.ended'));
    expect(ended.json.data).to.include({ id: live, status: 'ended' });
    // A refused write (unknown program) sends no schedule.changed.
    // Three schedule writes so far, each one schedule.changed.
    await eventually(() => forStation(fx.station.id, 'schedule.changed').length === 3);
    expect(
      (
        await putBroadcastRaw(server.url, fx.station.id, {
          programId: randomUUID(),
          startsAt: '2031-02-01T10:00:00Z',
          endsAt: '2031-02-01T11:00:00Z',
          nature: 'live',
        })
      ).status,
    ).to.be.oneOf([400, 404]);
    await putBroadcast(server.url, fx, '2031-03-01T10:00:00Z', '2031-03-01T11:00:00Z');
    await eventually(() => forStation(fx.station.id, 'schedule.changed').some((r) => r.json.data.fromDate === '2031-03-01'));
    expect(forStation(fx.station.id, 'schedule.changed')).to.have.length(4);
  });

  it('broadcast.ended for a live broadcast moved to another day, unpublished or deleted still carries the broadcast as in schedule, every field', async () => {
    const fx = await scheduleFixture(server.url, { timezone: 'Europe/Berlin' });
    await createHook(server.url, fx.station.id, receiver.url, ['broadcast.ended']);
    const scheduleKeys = [
      'id',
      'title',
      'startsAt',
      'endsAt',
      'timezone',
      'localDate',
      'resolution',
      'status',
      'cancellationReason',
      'repeatOfId',
      'nature',
      'program',
      'presenters',
    ];
    const now = Date.now();
    const onAirNow = [new Date(now - 60_000).toISOString(), new Date(now + 3600_000).toISOString()] as const;
    const moved = await putBroadcast(server.url, fx, ...onAirNow);
    await putBroadcast(server.url, fx, '2031-01-14T10:00:00Z', '2031-01-14T11:00:00Z', {}, moved);
    const [movedAway] = await arrived(() => forStation(fx.station.id, 'broadcast.ended'));
    expect(movedAway.json.data).to.have.keys(scheduleKeys);
    expect(movedAway.json.data).to.include({ id: moved, timezone: 'Europe/Berlin', resolution: 'exact' });
    expect(movedAway.json.data.presenters).to.deep.equal([{ id: fx.presenterId, title: 'Ana Host', image: null }]);

    const unpublished = await putBroadcast(server.url, fx, ...onAirNow);
    await putBroadcast(server.url, fx, ...onAirNow, { published: false }, unpublished);
    const [, withdrawn] = await arrived(() => forStation(fx.station.id, 'broadcast.ended'), 2);
    expect(withdrawn.json.data).to.have.keys(scheduleKeys);
    expect(withdrawn.json.data).to.include({ id: unpublished, cancellationReason: '', repeatOfId: null });
    expect(withdrawn.json.data.presenters).to.deep.equal([{ id: fx.presenterId, title: 'Ana Host', image: null }]);

    // Deleted while live: described as it was just before the delete.
    const deleted = await putBroadcast(server.url, fx, ...onAirNow);
    expect((await admin(server.url, 'DELETE', `/stations/${fx.station.id}/broadcasts/${deleted}`)).status).to.equal(204);
    const [, , gone] = await arrived(() => forStation(fx.station.id, 'broadcast.ended'), 3);
    expect(gone.json.data).to.have.keys(scheduleKeys);
    expect(gone.json.data).to.include({ id: deleted, startsAt: onAirNow[0], endsAt: onAirNow[1], timezone: 'Europe/Berlin' });
    expect(gone.json.data.presenters).to.deep.equal([{ id: fx.presenterId, title: 'Ana Host', image: null }]);
  });

  it('a station without webhooks costs its writes no webhook query once its (empty) subscriptions are cached', async () => {
    const { station, ingestToken } = await ingestFixture(server.url, { rundownFollowing: false });
    const queries: string[] = [];
    const listener = (q: { sql: string }) => queries.push(q.sql);
    server.svc.db.on('query', listener);
    try {
      await ingest(server.url, station, ingestToken, { artist: 'A', title: 'First', isPlaying: true });
      await eventually(() => queries.some((sql) => sql.includes('"webhooks"')));
      queries.length = 0;
      for (const title of ['Second', 'Third'])
        expect((await ingest(server.url, station, ingestToken, { artist: 'A', title, isPlaying: true })).status).to.equal(200);
      expect(queries.filter((sql) => sql.includes('webhooks'))).to.deep.equal([]);
    } finally {
      server.svc.db.removeListener('query', listener);
    }
  });

  it('a webhook receives only the events it subscribed to, and an inactive one none', async () => {
    const { station, ingestToken } = await ingestFixture(server.url, { rundownFollowing: false });
    const other = await startReceiver();
    try {
      await createHook(server.url, station.id, other.url, ['content.published']);
      const off = await createHook(server.url, station.id, other.url, ['now-playing.changed']);
      expect((await admin(server.url, 'PATCH', `/stations/${station.id}/webhooks/${off.id}`, { active: false })).body.active).to.equal(
        false,
      );
      const sentinel = await createHook(server.url, station.id, receiver.url, ['now-playing.changed']);
      await ingest(server.url, station, ingestToken, { artist: 'A', title: 'B', isPlaying: true });
      await eventually(() => forStation(station.id, 'now-playing.changed').length === 1);
      expect(sentinel.id).to.be.a('string');
      expect(other.received).to.have.length(0);
    } finally {
      await other.close();
    }
  });
});
