import { randomUUID } from 'node:crypto';
import { createServer, connect, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { expect } from 'chai';
import { EventSource } from 'eventsource';
import { sharedServer, type TestServer } from '../support/server.ts';
import { admin } from '../support/http.ts';
import { createStation, eventually } from '../support/factories.ts';
import {
  channelOf,
  closeTestGateways,
  FeedClient,
  gatewayHas,
  realtimePath,
  SseFeedClient,
  ssePath,
  startTestGateway,
  STATION_START_ROWS,
  withCursor,
  writeRow,
} from '../support/feed.ts';

type TestGateway = Awaited<ReturnType<typeof startTestGateway>>;
const httpOf = (gateway: TestGateway) => `http://127.0.0.1:${gateway.port}`;

describe('realtime feed: Server-Sent Events (/v1/realtime/sse)', () => {
  let server: TestServer;
  let gateway: TestGateway;
  before(async () => {
    server = await sharedServer();
    gateway = await startTestGateway({}, { ssePingMs: 200 });
  });
  after(closeTestGateways);

  it('answers 200 text/event-stream with no-store, X-Accel-Buffering: no and CORS; starts with retry: 3000; each message is id: <cursor> and data: <the WebSocket JSON>, no event field', async () => {
    const station = await createStation(server.url);
    await writeRow(server.svc, station.id, 'on-air', 'current', null);
    await writeRow(server.svc, station.id, 'now-playing', 'current', { track: { title: 'One' } });
    const sse = await SseFeedClient.open(httpOf(gateway) + ssePath(station.id));
    // A WebSocket asking for the full state plus synced (`lastEventId=`); an SSE stream always gets synced.
    const ws = await FeedClient.connect(gateway.url, withCursor(realtimePath(station.id)));
    expect(sse.status).to.equal(200);
    expect(sse.headers['content-type']).to.equal('text/event-stream; charset=utf-8');
    expect(sse.headers['cache-control']).to.equal('no-store');
    expect(sse.headers['x-accel-buffering']).to.equal('no');
    expect(sse.headers['access-control-allow-origin']).to.equal('*');
    const synced = await sse.waitSynced();
    expect(synced.data.data).to.deep.equal({ cursor: synced.id, states: { [channelOf(station.id)]: 'fresh' } });
    await ws.waitSynced();
    expect(sse.text.startsWith('retry: 3000\n\n')).to.equal(true);
    expect(sse.retries).to.deep.equal([3000]);
    expect(sse.data()).to.deep.equal(ws.messages); // the same JSON as the WebSocket
    for (const message of sse.messages) {
      expect(message.fields).to.deep.equal(['id', 'data']);
      expect(message.id).to.equal(message.data.data.cursor);
    }
    expect(sse.text).to.not.match(/^event:/m);

    await writeRow(server.svc, station.id, 'now-playing', 'current', { track: { title: 'Two' } });
    const live = await sse.waitMessage((m) => m.type === 'event' && m.data.events[0].endsWith('now-playing:current.update'));
    const wsLive = await ws.waitEvent((f) => f.data.events[0].endsWith('now-playing:current.update'));
    expect(live.data).to.deep.equal(wsLive);
    expect(live.id).to.equal(wsLive.data.cursor);
    sse.close();
    ws.close();
  });

  it('sends a comment line (: ping) as heartbeat', async () => {
    const station = await createStation(server.url);
    const sse = await SseFeedClient.open(httpOf(gateway) + ssePath(station.id));
    await eventually(() => sse.comments.length >= 2);
    expect(sse.comments[0]).to.equal(': ping');
    sse.close();
  });

  it('refuses with the HTTP status of the error code and the error message as a JSON body, no stream: 400, 404, 429, 503', async () => {
    const refusal = async (url: string, headers: Record<string, string> = {}) => {
      const reply = await SseFeedClient.open(url, headers);
      await reply.ended;
      expect(reply.headers['content-type']).to.equal('application/json');
      expect(reply.headers['access-control-allow-origin']).to.equal('*');
      const body = JSON.parse(reply.body);
      expect(Object.keys(body)).to.deep.equal(['type', 'data']);
      expect(body.type).to.equal('error');
      expect(body.data.message).to.be.a('string');
      return [reply.status, body.data.code];
    };
    const base = httpOf(gateway);
    expect(await refusal(`${base}/v1/realtime/sse`)).to.deep.equal([400, 'VALIDATION_ERROR']);
    expect(await refusal(`${base}/v1/realtime/sse?channels[]=nope`)).to.deep.equal([400, 'VALIDATION_ERROR']);
    expect(await refusal(base + ssePath('st_unknown_station'))).to.deep.equal([404, 'NOT_FOUND']);
    const noRealtime = await createStation(server.url, { modules: { realtime: false } });
    expect(await refusal(base + ssePath(noRealtime.id))).to.deep.equal([404, 'MODULE_DISABLED']);

    const limited = await startTestGateway({ GATEWAY_MAX_CONNECTIONS_PER_IP: '1' });
    const station = await createStation(server.url);
    const held = await SseFeedClient.open(httpOf(limited) + ssePath(station.id));
    await held.waitSynced();
    expect(await refusal(httpOf(limited) + ssePath(station.id))).to.deep.equal([429, 'RATE_LIMITED']);
    // The SSE and WebSocket connections of an address count together.
    const ws = await FeedClient.connect(limited.url, realtimePath(station.id));
    await ws.closed;
    expect(ws.frames[0].data.code).to.equal('RATE_LIMITED');
    held.close();
    await limited.close();

    const noDatabase = await startTestGateway({ DATABASE_URL: 'postgres://postgres@127.0.0.1:1/unreachable' });
    expect(await refusal(httpOf(noDatabase) + ssePath(station.id))).to.deep.equal([503, 'PROVIDER_UNAVAILABLE']);
    await noDatabase.close();
  });

  it('an idle stream outlives the HTTP idle timeout of the server: the default heartbeat comes at least every 15 s', async function () {
    this.timeout(30_000);
    const plain = await startTestGateway();
    const station = await createStation(server.url);
    const sse = await SseFeedClient.open(httpOf(plain) + ssePath(station.id));
    await sse.waitSynced();
    const opened = Date.now();
    await eventually(() => sse.comments.length >= 1, { timeoutMs: 15_000 });
    await eventually(() => Date.now() - opened > 12_000, { timeoutMs: 15_000 });
    expect(sse.response!.complete).to.equal(false); // still streaming
    await writeRow(server.svc, station.id, 'on-air', 'current', null);
    await sse.waitMessage((m) => m.type === 'event');
    sse.close();
    await plain.close();
  });

  it('the Last-Event-ID header resumes, and wins over lastEventId in the URL', async () => {
    const station = await createStation(server.url);
    await writeRow(server.svc, station.id, 'on-air', 'current', null);
    const first = await SseFeedClient.open(httpOf(gateway) + ssePath(station.id));
    const cursor = (await first.waitSynced()).id!;
    first.close();
    const record = randomUUID();
    await writeRow(server.svc, station.id, 'content', record, { id: record });
    await gatewayHas(gateway.url, station.id, (f) => f.data.payload.entry === record);

    const byUrl = await SseFeedClient.open(`${httpOf(gateway)}${ssePath(station.id)}&lastEventId=${encodeURIComponent(cursor)}`);
    expect((await byUrl.waitSynced()).data.data.states).to.deep.equal({ [channelOf(station.id)]: 'resumed' });
    expect(
      byUrl
        .data()
        .filter((m) => m.type === 'event')
        .map((m) => m.data.payload.entry),
    ).to.deep.equal([record]);
    byUrl.close();

    const both = await SseFeedClient.open(`${httpOf(gateway)}${ssePath(station.id)}&lastEventId=garbage`, { 'Last-Event-ID': cursor });
    expect((await both.waitSynced()).data.data.states).to.deep.equal({ [channelOf(station.id)]: 'resumed' });
    both.close();
    const headerBad = await SseFeedClient.open(`${httpOf(gateway)}${ssePath(station.id)}&lastEventId=${encodeURIComponent(cursor)}`, {
      'Last-Event-ID': 'garbage',
    });
    expect((await headerBad.waitSynced()).data.data.states).to.deep.equal({ [channelOf(station.id)]: 'reset' });
    headerBad.close();
  });

  it('an open stream of a station that may no longer be listened to gets the error message and ends', async () => {
    const station = await createStation(server.url);
    const sse = await SseFeedClient.open(httpOf(gateway) + ssePath(station.id));
    await sse.waitSynced();
    expect((await admin(server.url, 'PATCH', `/stations/${station.id}`, { modules: { realtime: false } })).status).to.equal(200);
    await sse.ended;
    expect(sse.data().at(-1)).to.include({ type: 'error' });
    expect(sse.data().at(-1).data.code).to.equal('MODULE_DISABLED');
  });

  it('a slow SSE client is closed past the buffered-bytes limit and never slows the others', async function () {
    this.timeout(60_000);
    const limited = await startTestGateway({ GATEWAY_MAX_BACKPRESSURE_BYTES: String(256 * 1024) });
    const station = await createStation(server.url);
    const fast = await SseFeedClient.open(httpOf(limited) + ssePath(station.id));
    const slow = await SseFeedClient.open(httpOf(limited) + ssePath(station.id));
    await fast.waitSynced();
    await slow.waitSynced();
    slow.response!.pause();
    const big = 'x'.repeat(512 * 1024);
    const rows = 80;
    for (let i = 0; i < rows; i++) await writeRow(server.svc, station.id, 'content', randomUUID(), { i, big });
    // Each stream started with the station's schedule, on-air and now-playing rows.
    const state = STATION_START_ROWS.length;
    await eventually(() => fast.data().filter((m) => m.type === 'event').length === state + rows, { timeoutMs: 30_000 });
    slow.response!.resume();
    await slow.ended;
    expect(slow.data().filter((m) => m.type === 'event').length).to.be.lessThan(state + rows);
    fast.close();
    await limited.close();
  });

  it('a draining gateway ends its streams; an EventSource reconnects with Last-Event-ID to another node and misses nothing', async function () {
    this.timeout(30_000);
    const one = await startTestGateway();
    const two = await startTestGateway();
    // A load balancer in front of both nodes: new connections go to `target`.
    let target = one.port;
    const sockets = new Set<Socket>();
    const balancer = createServer((client) => {
      const upstream = connect(target, '127.0.0.1');
      for (const s of [client, upstream]) {
        sockets.add(s);
        s.on('close', () => sockets.delete(s));
        s.on('error', () => s.destroy());
      }
      client.pipe(upstream).pipe(client);
    });
    await new Promise<void>((resolve) => balancer.listen(0, '127.0.0.1', resolve));
    const port = (balancer.address() as AddressInfo).port;

    const station = await createStation(server.url);
    await writeRow(server.svc, station.id, 'on-air', 'current', null);
    const received: any[] = [];
    const lastEventIds: Array<string | null> = [];
    const source = new EventSource(`http://127.0.0.1:${port}${ssePath(station.id)}`, {
      fetch: (input, init) => {
        lastEventIds.push(new Headers(init?.headers).get('last-event-id'));
        return fetch(input, init);
      },
    });
    source.onmessage = (event) => received.push(JSON.parse(event.data));
    await eventually(() => received.some((m) => m.type === 'synced'));

    target = two.port;
    await one.close(); // drains: the stream ends
    const during = [randomUUID(), randomUUID(), randomUUID()];
    for (const id of during) await writeRow(server.svc, station.id, 'content', id, { id });
    await eventually(() => received.filter((m) => m.type === 'synced').length === 2, { timeoutMs: 15_000 });
    const second = received.filter((m) => m.type === 'synced')[1];
    expect(second.data.states).to.deep.equal({ [channelOf(station.id)]: 'resumed' });
    expect(lastEventIds).to.have.length(2);
    expect(lastEventIds[1]).to.be.a('string').and.not.equal('');
    const afterSync = received.slice(received.findIndex((m) => m.type === 'synced') + 1);
    expect(afterSync.filter((m) => m.type === 'event').map((m) => m.data.payload.entry)).to.deep.equal(during);
    source.close();
    for (const s of sockets) s.destroy();
    await new Promise((resolve) => balancer.close(resolve));
    await two.close();
  });

  it('the same client code reads both transports: a WebSocket client and an SSE client end with the same state', async () => {
    const station = await createStation(server.url);
    const sse = await SseFeedClient.open(httpOf(gateway) + ssePath(station.id));
    const ws = await FeedClient.connect(gateway.url, withCursor(realtimePath(station.id)));
    await sse.waitSynced();
    await ws.waitSynced();
    const id = randomUUID();
    await writeRow(server.svc, station.id, 'content', id, { id });
    await sse.waitMessage((m) => m.type === 'event' && m.data.payload.entry === id);
    await ws.waitEvent((f) => f.data.payload.entry === id);
    expect(sse.data()).to.deep.equal(ws.messages);
    sse.close();
    ws.close();
  });
});
