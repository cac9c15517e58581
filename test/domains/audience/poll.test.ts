import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect } from 'chai';
import { useClockedServer } from '../../support/server.ts';
import { admin } from '../../support/http.ts';
import { createStation } from '../../support/factories.ts';
import { startIcecast, type Icecast } from '../../support/icecast.ts';
import { pollTick } from '../../../src/domains/audience/poll.ts';
import { registry } from '../../../src/lib/metrics.ts';
import type { Logger } from '../../../src/lib/logger.ts';
import type { Services } from '../../../src/services.ts';
import { storedSamples } from './helpers.ts';

// docs/audience.md#the-poller: a worker polls each stream's `stats` every AUDIENCE_POLL_SECONDS — Icecast's
// status-json.xsl (the source whose listenurl path ends with the mount, its `listeners`) and SHOUTcast
// v2's /stats?sid=N&json=1 (`currentlisteners`) — with timeouts and backoff; a failed poll (HTML, huge,
// slow, no such mount) stores no sample and says why in the worker log and in `streams.{key}.lastError`.
// Metric waveline_stream_listeners{station, stream}. A real Icecast (Debian's icecast2) with a source
// client streaming to a mount and real listener connections; a SHOUTcast-format fake for SHOUTcast only.

const T0 = new Date('2026-06-01T12:00:00Z');
const MOUNT = '/live.mp3';

/** SHOUTcast v2 and the ways a status URL goes wrong, on one local server. */
function startFakes(): Promise<Server> {
  const server = createServer((req, res) => {
    const url = new URL(req.url!, 'http://x');
    if (url.pathname === '/stats' && url.searchParams.get('json') === '1') {
      res.setHeader('content-type', 'application/json');
      // The fields SHOUTcast DNAS 2.x sends in its JSON stats (a subset).
      res.end(
        JSON.stringify({
          currentlisteners: 42,
          peaklisteners: 50,
          maxlisteners: 500,
          uniquelisteners: 40,
          averagetime: 300,
          servergenre: 'Pop',
          songtitle: 'A - B',
          streamstatus: 1,
          bitrate: '128',
          content: 'audio/mpeg',
        }),
      );
    } else if (url.pathname === '/html') {
      res.setHeader('content-type', 'text/html');
      res.end('<!DOCTYPE html><html><body>Icecast Streaming Media Server</body></html>');
    } else if (url.pathname === '/huge') {
      res.setHeader('content-type', 'application/json');
      const chunk = Buffer.alloc(64 * 1024, 0x20);
      let sent = 0;
      const more = () => {
        while (sent < 64 && res.write(chunk)) sent++;
        if (sent < 64) res.once('drain', more);
        else res.end();
      };
      res.write('{"icestats":');
      more();
    } else if (url.pathname === '/slow') {
      // Never answers: the poller's deadline ends it.
    } else {
      res.statusCode = 404;
      res.end();
    }
  });
  return new Promise((ok) => server.listen(0, '127.0.0.1', () => ok(server)));
}

describe('audience: the listener poller', function () {
  this.timeout(60_000);
  const { clock, server } = useClockedServer(T0, { reset: true });
  let icecast: Icecast;
  let fakes: Server;
  let fakeUrl: string;
  let stopSource: () => void;
  const listeners: Array<{ close(): void }> = [];
  const logs: Array<{ obj: Record<string, unknown>; msg: string }> = [];
  const svc = () => {
    const real = server.svc as unknown as Services;
    const logger = { ...real.logger, warn: (obj: Record<string, unknown>, msg: string) => logs.push({ obj, msg }) } as unknown as Logger;
    return { ...real, logger };
  };

  before(async () => {
    icecast = await startIcecast();
    stopSource = (await icecast.source(MOUNT)).stop;
    for (let i = 0; i < 3; i++) listeners.push(await icecast.listen(MOUNT));
    // Icecast counts a listener once it is attached to the source.
    const deadline = Date.now() + 10_000;
    while ((await icecast.listeners(MOUNT)) !== 3) {
      if (Date.now() > deadline) throw new Error('Icecast never listed 3 listeners');
      await new Promise((r) => setTimeout(r, 50));
    }
    fakes = await startFakes();
    fakeUrl = `http://127.0.0.1:${(fakes.address() as AddressInfo).port}`;
  });
  after(async () => {
    for (const l of listeners) l.close();
    stopSource?.();
    await icecast?.stop();
    fakes?.closeAllConnections();
    await new Promise((r) => fakes?.close(r));
  });
  beforeEach(() => (logs.length = 0));

  async function stationWith(stats: Record<string, Record<string, unknown> | null>) {
    // Through the admin API: `stats` is the audience feature's stream entry field.
    const streamUrls = Object.entries(stats).map(([key, s]) => ({ url: `https://stream.example.org/${key}`, key, stats: s }));
    return createStation(server.url, { profile: { streamUrls } });
  }
  const audience = async (stationId: string) => {
    const res = await admin(
      server.url,
      'GET',
      `/stations/${stationId}/audience?from=${encodeURIComponent('2026-06-01T11:00:00Z')}&to=${encodeURIComponent('2026-06-01T13:00:00Z')}`,
    );
    expect(res.status, res.text).to.equal(200);
    return res.body;
  };
  const gauge = async (stationId: string, stream: string) => {
    const metric = await registry.getSingleMetric('waveline_stream_listeners')!.get();
    return metric.values.find((v) => v.labels.station === stationId && v.labels.stream === stream)?.value;
  };

  it('reads a real Icecast status document: the listeners of the source whose listenurl ends with the mount', async () => {
    const station = await stationWith({ mp3: { kind: 'icecast', url: icecast.statusUrl, mount: MOUNT }, hls: null });
    const result = await pollTick(svc(), { stationIds: [station.id] });
    expect(result).to.deep.equal({ polled: 1, stored: 1, failed: 0, skipped: 0 });
    const rows = await storedSamples(server.svc as unknown as Services, station.id);
    expect(rows.map((r) => [r.stream_key, r.listeners, r.source, r.at.toISOString()])).to.deep.equal([
      ['mp3', 3, 'poll', T0.toISOString()],
    ]);
    expect(await gauge(station.id, 'mp3')).to.equal(3);
    const body = await audience(station.id);
    expect(body.streams).to.deep.equal({
      mp3: { lastSampleAt: T0.toISOString(), lastError: null },
      hls: { lastSampleAt: null, lastError: null },
    });
  });

  it('follows the real count: a listener leaves, the next poll reads 2', async () => {
    const station = await stationWith({ mp3: { kind: 'icecast', url: icecast.statusUrl, mount: 'live.mp3' } });
    listeners.pop()!.close();
    const deadline = Date.now() + 10_000;
    while ((await icecast.listeners(MOUNT)) !== 2) {
      if (Date.now() > deadline) throw new Error('Icecast never dropped to 2 listeners');
      await new Promise((r) => setTimeout(r, 50));
    }
    await pollTick(svc(), { stationIds: [station.id] });
    const rows = await storedSamples(server.svc as unknown as Services, station.id);
    expect(rows.map((r) => r.listeners)).to.deep.equal([2]);
  });

  it('reads SHOUTcast v2 JSON stats (currentlisteners)', async () => {
    const station = await stationWith({ sc: { kind: 'shoutcast', url: `${fakeUrl}/stats?sid=1&json=1` } });
    await pollTick(svc(), { stationIds: [station.id] });
    const rows = await storedSamples(server.svc as unknown as Services, station.id);
    expect(rows.map((r) => [r.stream_key, r.listeners])).to.deep.equal([['sc', 42]]);
  });

  const failures: Array<[string, () => Record<string, unknown>, RegExp]> = [
    [
      'a mount Icecast does not list',
      () => ({ kind: 'icecast', url: icecast.statusUrl, mount: '/nope.mp3' }),
      /no source on mount \/nope\.mp3/,
    ],
    ['an HTML page', () => ({ kind: 'icecast', url: `${fakeUrl}/html`, mount: MOUNT }), /answered HTML or XML, not JSON/],
    ['a huge body (capped)', () => ({ kind: 'icecast', url: `${fakeUrl}/huge`, mount: MOUNT }), /sent more than \d+ bytes/],
    ['a server that never answers (timeout)', () => ({ kind: 'icecast', url: `${fakeUrl}/slow`, mount: MOUNT }), /timed out/],
    ['an HTTP error', () => ({ kind: 'shoutcast', url: `${fakeUrl}/missing` }), /answered HTTP 404/],
    ['a server that is down', () => ({ kind: 'shoutcast', url: 'http://127.0.0.1:9/stats?sid=1&json=1' }), /could not be reached/],
  ];
  for (const [what, stats, reason] of failures) {
    it(`${what}: no sample; lastError says why, in the audience answer and a worker log line; no metric series`, async () => {
      const station = await stationWith({ mp3: stats() });
      const started = Date.now();
      const result = await pollTick(svc(), { stationIds: [station.id], timeoutMs: 500 });
      expect(Date.now() - started).to.be.below(5000);
      expect(result).to.include({ polled: 1, stored: 0, failed: 1 });
      expect(await storedSamples(server.svc as unknown as Services, station.id)).to.have.length(0);
      const body = await audience(station.id);
      expect(body.streams.mp3.lastSampleAt).to.equal(null);
      expect(body.streams.mp3.lastError).to.match(reason);
      const line = logs.find((l) => l.obj.stationId === station.id);
      expect(line?.msg).to.equal('listener count poll stored no sample');
      expect(String(line?.obj.reason)).to.match(reason);
      expect(await gauge(station.id, 'mp3')).to.equal(undefined);
    });
  }

  it('a failing stream backs off (2^failures poll intervals), then is asked again; a good poll clears lastError', async () => {
    const station = await stationWith({ mp3: { kind: 'icecast', url: icecast.statusUrl, mount: '/later.mp3' } });
    expect(await pollTick(svc(), { stationIds: [station.id] })).to.include({ failed: 1 });
    clock.advance(30_000);
    expect(await pollTick(svc(), { stationIds: [station.id] }), 'one failure: wait 2 intervals').to.include({ polled: 0, skipped: 1 });
    clock.advance(30_000);
    expect(await pollTick(svc(), { stationIds: [station.id] })).to.include({ polled: 1, failed: 1 });
    clock.advance(60_000);
    expect(await pollTick(svc(), { stationIds: [station.id] }), 'two failures: wait 4 intervals').to.include({ polled: 0, skipped: 1 });
    const source = await icecast.source('/later.mp3');
    try {
      clock.advance(60_000);
      expect(await pollTick(svc(), { stationIds: [station.id] })).to.include({ polled: 1, stored: 1 });
      const body = await audience(station.id);
      expect(body.streams.mp3).to.deep.equal({ lastSampleAt: new Date(clock.now()).toISOString(), lastError: null });
    } finally {
      source.stop();
    }
  });
});
