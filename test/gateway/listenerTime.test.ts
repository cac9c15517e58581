import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { sharedServer, type TestServer } from '../support/server.ts';
import { createStation, eventually } from '../support/factories.ts';
import { requiresRedis } from '../support/mode.ts';
import { startProcess, type RoleProcess } from '../support/processes.ts';
import { channelOf, closeTestGateways, startTestGateway, writeRow } from '../support/feed.ts';
import { Listener, nowPlayingData, setStreams, streamPath, titleOf, writeRowAt, type Transport } from '../support/listenerTime.ts';

// docs/realtime.md#listener-time-stream: `stream={key}` on the feed URL delays the connection's now-playing and
// on-air rows by the stream's latency — initial state at heard time, each change when it becomes audible —
// while schedule and content are not delayed; cursors and resume work the same, never early, never lossy.

const NOW_PLAYING = 'now-playing:current';
const ON_AIR = 'on-air:current';
/** How early a change may arrive before its audible moment: clock rounding only (ISO times are in ms). */
const EARLY_MS = 5;
/** How late it may arrive: generous, the machine is shared (the bench measures the real figure). */
const LATE_MS = 2500;

for (const transport of ['websocket', 'sse'] as Transport[]) {
  describe(`realtime feed: listener time (stream=) over ${transport === 'websocket' ? 'the WebSocket' : 'SSE'}`, () => {
    let server: TestServer;
    before(async () => {
      server = await sharedServer();
    });
    after(closeTestGateways);

    it('a delayed connection starts with the state at heard time (on a gateway that has just started) and gets each now-playing and on-air change when it becomes audible; schedule and content are not delayed', async function () {
      this.timeout(40_000);
      const { svc } = server;
      const station = await createStation(server.url);
      await setStreams(svc, station.id, [{ key: 'mp3', latencySeconds: 5 }, { key: 'dab' }]);
      const t0 = Date.now();
      await writeRowAt(svc, station.id, 'on-air', { broadcast: 'before' }, new Date(t0 - 20_000));
      await writeRowAt(svc, station.id, 'now-playing', nowPlayingData(station.id, 'first', t0 - 20_000), new Date(t0 - 20_000));
      // On air now, audible to the mp3 stream's listeners 5 s from now.
      await writeRowAt(svc, station.id, 'on-air', { broadcast: 'now' }, new Date(t0));
      await writeRowAt(svc, station.id, 'now-playing', nowPlayingData(station.id, 'second', t0), new Date(t0));

      const gateway = await startTestGateway(); // cold: the earlier versions are only in Postgres
      const delayed = await Listener.open(transport, gateway.port, streamPath(station.id, 'mp3'));
      const live = await Listener.open(transport, gateway.port, streamPath(station.id, 'dab')); // latency 0: live
      const synced = await delayed.synced();
      await live.synced();
      expect(synced.at, 'the state arrived before the change became audible (else the test proves nothing)').to.be.below(t0 + 5000);

      const [firstState] = delayed.eventsOf(NOW_PLAYING);
      expect(titleOf(firstState)).to.equal('first');
      expect(Listener.rowData(delayed.eventsOf(ON_AIR)[0])).to.deep.equal({ broadcast: 'before' });
      // Freshness and elapsed time at heard time (now − 5 s), not at the send time.
      const heardAge = Math.floor((firstState.at - 5000 - (t0 - 20_000)) / 1000);
      expect(Listener.rowData(firstState).freshness.ageSeconds).to.be.within(heardAge - 1, heardAge);
      expect(Listener.rowData(firstState).elapsedSeconds).to.be.within(heardAge - 1, heardAge);
      expect(titleOf(live.eventsOf(NOW_PLAYING)[0])).to.equal('second');
      expect(Listener.rowData(live.eventsOf(ON_AIR)[0])).to.deep.equal({ broadcast: 'now' });

      // Content and schedule go out at once.
      const written = Date.now();
      const record = randomUUID();
      await writeRow(svc, station.id, 'content', record, { record });
      await writeRow(svc, station.id, 'schedule', 'current', { days: 'rebuilt' });
      const content = await delayed.waitFor((m) => m.data.data?.payload?.$id === `content:${record}`);
      const schedule = await delayed.waitFor((m) => m.data.data?.payload?.$id === 'schedule:current');
      expect(content.at - written).to.be.below(LATE_MS);
      expect(schedule.at - written).to.be.below(LATE_MS);
      if (schedule.at < t0 + 5000) expect(delayed.eventsOf(NOW_PLAYING), 'nothing of the new track before it is audible').to.have.length(1);

      const second = await delayed.waitFor((m) => m.data.data?.payload?.$id === NOW_PLAYING && titleOf(m) === 'second');
      const onAir = await delayed.waitFor((m) => m.data.data?.payload?.$id === ON_AIR && Listener.rowData(m)?.broadcast === 'now');
      for (const change of [second, onAir]) expect(change.at).to.be.within(t0 + 5000 - EARLY_MS, t0 + 5000 + LATE_MS);
      expect(second.data.data.events[0]).to.equal(`${channelOf(station.id)}.rows.${NOW_PLAYING}.update`);
      const heard = Listener.rowData(second);
      expect(heard.freshness.ageSeconds, 'a change is sent at its heard moment: age 0 then').to.be.at.most(LATE_MS / 1000);
      expect(heard.endsAt, 'endsAt: when the listener hears the track end').to.equal(new Date(t0 + 240_000 + 5000).toISOString());
      expect(delayed.messages.indexOf(content)).to.be.below(delayed.messages.indexOf(second));
      delayed.close();
      live.close();
    });

    it('an unknown stream key is refused like a bad channel (WebSocket: error, then 1008; SSE: 400 with the JSON error)', async () => {
      const gateway = await startTestGateway();
      const station = await createStation(server.url);
      await setStreams(server.svc, station.id, [{ key: 'mp3', latencySeconds: 6 }, { latencySeconds: 30 }]);
      for (const stream of ['nope', 'Bad!Key']) {
        const refused = await Listener.open(transport, gateway.port, streamPath(station.id, encodeURIComponent(stream)));
        if (transport === 'websocket') {
          expect((await refused.closed).code).to.equal(1008);
          expect(refused.messages.map((m) => m.data.type)).to.deep.equal(['error']);
          expect(refused.messages[0].data.data.code).to.equal('VALIDATION_ERROR');
        } else {
          expect(refused.status).to.equal(400);
          await refused.closed;
          const body = JSON.parse(refused.body);
          expect(body.type).to.equal('error');
          expect(body.data.code).to.equal('VALIDATION_ERROR');
          refused.messages.length = 0;
        }
      }
      // The message names the station's keys; an entry without a key is `stream-{n}`.
      const unknown = await Listener.open(transport, gateway.port, streamPath(station.id, 'nope'));
      await unknown.closed;
      const message = transport === 'websocket' ? unknown.messages[0].data.data.message : JSON.parse(unknown.body).data.message;
      expect(message).to.contain('mp3').and.contain('stream-2');
      // The feed's error has no `suggestion` field (`{code, message}`): its message names every key, and a
      // station without streams says it has none.
      const bare = await createStation(server.url);
      const none = await Listener.open(transport, gateway.port, streamPath(bare.id, 'mp3'));
      await none.closed;
      const noneMessage = transport === 'websocket' ? none.messages[0].data.data.message : JSON.parse(none.body).data.message;
      expect(noneMessage).to.contain('its streams: none');
      const keyless = await Listener.open(transport, gateway.port, streamPath(station.id, 'stream-2'));
      await keyless.synced();
      keyless.close();
    });

    it('resume on a delayed connection is neither early nor lossy: across a drain (1012) to a second gateway, and to a cold one', async function () {
      this.timeout(40_000);
      const { svc } = server;
      const station = await createStation(server.url);
      await setStreams(svc, station.id, [{ key: 'hls', latencySeconds: 3 }]);
      await writeRowAt(svc, station.id, 'now-playing', nowPlayingData(station.id, 'a', Date.now() - 30_000), new Date(Date.now() - 30_000));
      const one = await startTestGateway();
      const two = await startTestGateway();
      const first = await Listener.open(transport, one.port, streamPath(station.id, 'hls'));
      await first.synced();
      expect(first.eventsOf(NOW_PLAYING).map(titleOf)).to.deep.equal(['a']);

      // A new track on air (audible in 3 s) and a record published (at once); the listener has the record.
      const tb = Date.now();
      await writeRowAt(svc, station.id, 'now-playing', nowPlayingData(station.id, 'b', tb), new Date(tb));
      const record = randomUUID();
      await writeRow(svc, station.id, 'content', record, { record });
      await first.waitFor((m) => m.data.data?.payload?.$id === `content:${record}`);
      const cursor = first.lastCursor();
      await one.close(); // drains: 1012 / the stream ends
      await first.closed;

      const second = await Listener.open(transport, two.port, streamPath(station.id, 'hls'), cursor);
      const synced = await second.synced();
      expect(synced.data.data.states ?? synced.data.data.channels).to.deep.equal({ [channelOf(station.id)]: 'resumed' });
      const replayed = second.messages.slice(0, second.messages.indexOf(synced)).filter((m) => m.data.type === 'event');
      expect(replayed, 'nothing to replay: the record was had, b not audible yet').to.have.length(synced.at < tb + 3000 ? 0 : 1);
      const b = await second.waitFor((m) => m.data.data?.payload?.$id === NOW_PLAYING && titleOf(m) === 'b');
      expect(b.at).to.be.within(tb + 3000 - EARLY_MS, tb + 3000 + LATE_MS);
      expect(second.eventsOf(NOW_PLAYING).map(titleOf)).to.deep.equal(['b']);
      expect(second.eventsOf(`content:${record}`)).to.have.length(0);

      // Away while c goes on air and becomes audible: the resume on a gateway that has just started sends c.
      const kept = second.lastCursor();
      second.close();
      const tc = Date.now();
      await writeRowAt(svc, station.id, 'now-playing', nowPlayingData(station.id, 'c', tc), new Date(tc));
      await new Promise((resolve) => setTimeout(resolve, Math.max(0, tc + 3200 - Date.now())));
      const three = await startTestGateway();
      const third = await Listener.open(transport, three.port, streamPath(station.id, 'hls'), kept);
      const resumed = await third.synced();
      expect(resumed.data.data.states ?? resumed.data.data.channels).to.deep.equal({ [channelOf(station.id)]: 'resumed' });
      const replay = third.messages.slice(0, third.messages.indexOf(resumed)).filter((m) => m.data.type === 'event');
      expect(replay.map((m) => m.data.data.payload.$id)).to.deep.equal([NOW_PLAYING]);
      expect(titleOf(replay[0])).to.equal('c');
      third.close();
      await two.close();
      await three.close();
    });
  });
}

describe('realtime feed: listener time across gateway processes', () => {
  let child: RoleProcess | null = null;
  after(() => {
    if (child && child.child.exitCode === null) child.child.kill('SIGKILL');
  });

  it('a delayed feed resumed on a second gateway process (`waveline gateway`, cold) gets what became audible meanwhile, and nothing before it is audible', async function () {
    requiresRedis(this, 'separate gateway processes share the feed only through Redis');
    this.timeout(60_000);
    const server = await sharedServer();
    const { svc } = server;
    const station = await createStation(server.url);
    await setStreams(svc, station.id, [{ key: 'hls', latencySeconds: 3 }]);
    await writeRowAt(svc, station.id, 'now-playing', nowPlayingData(station.id, 'a', Date.now() - 30_000), new Date(Date.now() - 30_000));
    const one = await startTestGateway();
    const first = await Listener.open('websocket', one.port, streamPath(station.id, 'hls'));
    await first.synced();
    child = startProcess(['gateway'], { PORT: '0', NODE_ENV: 'production' });
    const port = await eventually(() => Number(/"port":(\d+)[^\n]*"msg":"gateway listening"/.exec(child!.output())?.[1] ?? 0), {
      timeoutMs: 30_000,
    });

    // b goes on air; the listener leaves before it is audible, and c goes on air while it is away.
    const tb = Date.now();
    await writeRowAt(svc, station.id, 'now-playing', nowPlayingData(station.id, 'b', tb), new Date(tb));
    const cursor = first.lastCursor();
    first.close();
    const tc = Date.now() + 1500;
    await writeRowAt(svc, station.id, 'now-playing', nowPlayingData(station.id, 'c', tc), new Date());

    const second = await Listener.open('websocket', port, streamPath(station.id, 'hls'), cursor);
    const synced = await second.synced();
    expect(synced.data.data.states ?? synced.data.data.channels).to.deep.equal({ [channelOf(station.id)]: 'resumed' });
    const c = await second.waitFor((m) => m.data.type === 'event' && titleOf(m) === 'c');
    for (const m of second.messages.filter((x) => x.data.type === 'event')) {
      const audible = (titleOf(m) === 'b' ? tb : tc) + 3000;
      expect(m.at, `${titleOf(m)} not before it is audible`).to.be.at.least(audible - EARLY_MS);
    }
    expect(c.at).to.be.at.most(tc + 3000 + LATE_MS);
    expect(second.messages.filter((m) => m.data.type === 'event').map(titleOf)).to.include('c');
    second.close();
    await one.close();
    child.child.kill('SIGTERM');
    await child.exited;
  });
});
