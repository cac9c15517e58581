import { expect } from 'chai';
import { sharedServer, type TestServer } from '../support/server.ts';
import { createStation, eventually } from '../support/factories.ts';
import { socketAddress } from '../../src/gateway/admission.ts';
import {
  closeTestGateways,
  FeedClient,
  realtimePath,
  SseFeedClient,
  ssePath,
  startTestGateway,
  STATION_START_ROWS,
  writeRow,
} from '../support/feed.ts';

// Connection limits, client frames, heartbeats.

let ipCounter = 0;
/** A client address of its own per test (the gateway trusts one proxy hop of X-Forwarded-For by default). */
const fromIp = () => ({ headers: { 'x-forwarded-for': `198.51.100.${++ipCounter}` } });

describe('realtime feed: limits and heartbeats', () => {
  let server: TestServer;
  before(async () => {
    server = await sharedServer();
  });
  after(closeTestGateways);

  it('refuses connections past GATEWAY_MAX_CONNECTIONS_PER_IP (RATE_LIMITED, 1008) and counts each client IP apart', async () => {
    const gateway = await startTestGateway({ GATEWAY_MAX_CONNECTIONS_PER_IP: '2' });
    const station = await createStation(server.url);
    const ip = fromIp();
    // A row of state, so that a client's first frame proves the gateway admitted (and counted) it: the
    // socket opens before admission is decided.
    await writeRow(server.svc, station.id, 'now-playing', 'current', { track: 'x' });
    const first = await FeedClient.ready(gateway.url, realtimePath(station.id), 1, ip);
    await FeedClient.ready(gateway.url, realtimePath(station.id), 1, ip);
    const third = new FeedClient(gateway.url + realtimePath(station.id), ip);
    expect((await third.closed).code).to.equal(1008);
    expect(third.frames).to.deep.equal([{ type: 'error', data: { code: 'RATE_LIMITED', message: third.frames[0].data.message } }]);

    const elsewhere = await FeedClient.connect(gateway.url, realtimePath(station.id), fromIp());
    expect(elsewhere.closeCode).to.equal(null);
    first.close(); // frees a place
    await eventually(async () => {
      const retry = new FeedClient(gateway.url + realtimePath(station.id), ip);
      await retry.opened;
      await new Promise((resolve) => setTimeout(resolve, 50));
      return retry.closeCode === null;
    });
  });

  it('without a trusted proxy (TRUSTED_PROXY_HOPS=0) the socket address is the client IP: X-Forwarded-For cannot make a new client, on either transport', async () => {
    const gateway = await startTestGateway({ GATEWAY_MAX_CONNECTIONS_PER_IP: '1', TRUSTED_PROXY_HOPS: '0' });
    const station = await createStation(server.url);
    await writeRow(server.svc, station.id, 'now-playing', 'current', { track: 'x' });
    await FeedClient.ready(gateway.url, realtimePath(station.id), 1, fromIp());
    const again = new FeedClient(gateway.url + realtimePath(station.id), fromIp());
    expect((await again.closed).code).to.equal(1008);
    expect(again.frames[0].data.code).to.equal('RATE_LIMITED');
    const sse = await SseFeedClient.open(gateway.url.replace('ws:', 'http:') + ssePath(station.id), fromIp().headers);
    expect(sse.status).to.equal(429);
  });

  it('writes socket addresses as before: IPv4 and IPv4-mapped IPv6 dotted, IPv6 as uWS writes it (per-IP counts and rate-limit buckets keep their keys)', () => {
    const bytes = (...b: number[]) => new Uint8Array(b).buffer;
    expect(socketAddress(bytes(127, 0, 0, 1))).to.equal('127.0.0.1');
    expect(socketAddress(bytes(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 203, 0, 113, 50))).to.equal('203.0.113.50');
    expect(socketAddress(bytes(0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0, 0, 0, 1))).to.equal(
      '2001:0db8:0000:0000:0000:ffff:0000:0001',
    );
    expect(socketAddress(bytes(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1))).to.equal('0000:0000:0000:0000:0000:0000:0000:0001');
  });

  it('limits connection attempts per client IP to RATE_LIMIT_ANONYMOUS_PER_MINUTE', async () => {
    const gateway = await startTestGateway({ RATE_LIMIT_ANONYMOUS_PER_MINUTE: '3' });
    const station = await createStation(server.url);
    const ip = fromIp();
    const bad = new FeedClient(gateway.url + '/v1/realtime?channels[]=nope', ip); // refused attempts count too
    await bad.closed;
    for (let i = 0; i < 2; i++) await FeedClient.connect(gateway.url, realtimePath(station.id), ip);
    const over = new FeedClient(gateway.url + realtimePath(station.id), ip);
    expect((await over.closed).code).to.equal(1008);
    expect(over.frames[0].data.code).to.equal('RATE_LIMITED');
    expect(over.frames[0].data.message).to.match(/retry in \d+ s/);
    const other = new FeedClient(gateway.url + realtimePath(station.id), fromIp());
    await other.opened;
    await writeRow(server.svc, station.id, 'now-playing', 'current', { track: 'x' });
    await other.waitFrames(1);
    expect(other.frames[0].type).to.equal('event');
  });

  it('ignores frames from clients; a frame over GATEWAY_MAX_MESSAGE_BYTES closes the connection', async () => {
    const gateway = await startTestGateway({ GATEWAY_MAX_MESSAGE_BYTES: '256' });
    const station = await createStation(server.url);
    // The station's state first (its schedule, on-air and now-playing rows), then the change.
    const talker = await FeedClient.ready(gateway.url, realtimePath(station.id), STATION_START_ROWS.length);
    talker.ws.send(JSON.stringify({ type: 'subscribe', channels: ['stations.other.feed'] }));
    talker.ws.send('not json at all');
    await writeRow(server.svc, station.id, 'now-playing', 'current', { track: 'y' });
    await talker.waitFrames(STATION_START_ROWS.length + 1);
    expect(talker.frames.map((f) => f.type)).to.deep.equal(Array(STATION_START_ROWS.length + 1).fill('event'));
    expect(talker.closeCode).to.equal(null);

    talker.ws.send('x'.repeat(1000));
    const { code } = await talker.closed;
    expect(code).to.not.equal(1000);
  });

  it('answers a plain HTTP request on the feed path with 426 and reports health', async () => {
    const gateway = await startTestGateway();
    const base = gateway.url.replace('ws:', 'http:');
    const feed = await fetch(`${base}/v1/realtime`);
    expect(feed.status).to.equal(426);
    const health = await fetch(`${base}/healthz`);
    expect(health.status).to.equal(200);
    expect(await health.json()).to.deep.include({ ok: true });
    expect((await fetch(`${base}/elsewhere`)).status).to.equal(404);
  });

  it("every HTTP answer carries X-Request-Id: the client's when it is a sane token, else a fresh one", async () => {
    const gateway = await startTestGateway();
    const base = gateway.url.replace('ws:', 'http:');
    for (const path of ['/v1/realtime', '/healthz', '/metrics', '/elsewhere']) {
      const fresh = await fetch(`${base}${path}`);
      expect(fresh.headers.get('x-request-id'), path).to.match(/^[0-9a-f-]{36}$/);
      const echoed = await fetch(`${base}${path}`, { headers: { 'x-request-id': 'lb-trace.42' } });
      expect(echoed.headers.get('x-request-id'), path).to.equal('lb-trace.42');
      const odd = await fetch(`${base}${path}`, { headers: { 'x-request-id': 'not a token' } });
      expect(odd.headers.get('x-request-id'), path).to.match(/^[0-9a-f-]{36}$/);
    }
  });

  it('pings idle clients and drops a peer that stops answering within the idle timeout', async function () {
    this.timeout(40_000);
    const gateway = await startTestGateway({ GATEWAY_IDLE_TIMEOUT_SECONDS: '8' });
    const base = gateway.url.replace('ws:', 'http:');
    const station = await createStation(server.url);
    const alive = await FeedClient.connect(gateway.url, realtimePath(station.id));
    const dead = await FeedClient.connect(gateway.url, realtimePath(station.id));
    let pinged = false;
    alive.ws.on('ping', () => {
      pinged = true;
    });
    dead.ws.pause(); // a vanished peer: reads nothing, answers no ping
    const connections = async () => ((await (await fetch(`${base}/healthz`)).json()) as { connections: number }).connections;
    expect(await connections()).to.equal(2);
    await eventually(async () => (await connections()) === 1, { timeoutMs: 30_000, intervalMs: 250 });
    expect(pinged).to.equal(true);
    expect(alive.closeCode).to.equal(null);
    dead.close();
  });
});
