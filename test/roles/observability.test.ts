import { expect } from 'chai';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import { loadConfig } from '../../src/config.ts';
import { createLogger } from '../../src/lib/logger.ts';
import { cacheLookup } from '../../src/lib/metrics.ts';
import { createWebServices } from '../../src/roles/services.ts';
import type { WebServices } from '../../src/services.ts';
import { startWeb } from '../../src/roles/web.ts';
import { startWorkers } from '../../workers/index.ts';
import { startWorkerHttp } from '../../workers/http.ts';
import { createToken, eventually, listenerFixture } from '../support/factories.ts';
import { closeTestGateways, FeedClient, realtimePath, SseFeedClient, ssePath, startTestGateway, writeRow } from '../support/feed.ts';
import { ADMIN_TOKEN } from '../support/env.ts';
import { admin, request } from '../support/http.ts';
import { sharedServer, startTestServer } from '../support/server.ts';
import { onRedisCluster, requiresRedis } from '../support/mode.ts';

// Metrics on every role, request logs, the queue dashboard (docs/operations.md#observability).

/** One sample of a Prometheus text exposition: the value of `name{labels…}` (labels in any order), or 0. */
function sample(text: string, name: string, labels: Record<string, string> = {}): number {
  for (const line of text.split('\n')) {
    if (!line.startsWith(name)) continue;
    const match = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!match || match[1] !== name) continue;
    const found = Object.fromEntries([...(match[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map((m) => [m[1], m[2]]));
    if (Object.entries(labels).every(([k, v]) => found[k] === v)) return Number(match[3]);
  }
  return 0;
}

/** A web process whose log lines are kept (JSON objects) for the test to read. */
async function loggedServer(
  env: Record<string, string> = {},
): Promise<{ url: string; svc: WebServices; lines: Array<Record<string, unknown>>; raw: string[]; close(): Promise<void> }> {
  const config = loadConfig({ ...process.env, PORT: '0', LOG_LEVEL: 'info', ...env });
  const raw: string[] = [];
  const sink = new Writable({
    write(chunk, _encoding, done) {
      raw.push(...String(chunk).split('\n').filter(Boolean));
      done();
    },
  });
  const logger = createLogger(config, 'test', sink);
  const svc = await createWebServices(config, logger);
  const web = await startWeb(svc, 0, logger);
  const { port } = web.server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    svc,
    raw,
    get lines() {
      return raw.map((line) => JSON.parse(line) as Record<string, unknown>);
    },
    async close() {
      await web.close();
      await svc.close();
    },
  };
}

describe('observability', () => {
  describe('web /metrics', () => {
    it('counts requests by route template, method and status in a latency histogram, never by raw path', async () => {
      const server = await sharedServer();
      const { station, token } = await listenerFixture(server.url);
      const route = '/api/v1/stations/{stationSlug}';
      const before = sample((await request(server.url, 'GET', '/metrics')).text, 'waveline_http_request_duration_seconds_count', {
        method: 'GET',
        route,
        status: '200',
      });
      for (let i = 0; i < 2; i++)
        expect((await request(server.url, 'GET', `/api/v1/stations/${station.slug}`, { token })).status).to.equal(200);
      // A second web app in the same process (as in `waveline dev` or these tests) adds to the same series.
      const other = await startTestServer();
      try {
        expect((await request(other.url, 'GET', `/api/v1/stations/${station.slug}`, { token })).status).to.equal(200);
      } finally {
        await other.close();
      }
      expect((await request(server.url, 'GET', `/api/v1/stations/${station.slug}`)).status).to.equal(401);
      expect((await request(server.url, 'GET', `/no/such/${token}`)).status).to.equal(404);
      const res = await request(server.url, 'GET', '/metrics');
      expect(res.status).to.equal(200);
      expect(res.headers.get('content-type')).to.match(/^text\/plain; version=0\.0\.4/);
      const text = res.text;
      expect(sample(text, 'waveline_http_request_duration_seconds_count', { method: 'GET', route, status: '200' }) - before).to.equal(3);
      expect(sample(text, 'waveline_http_request_duration_seconds_count', { method: 'GET', route, status: '401' })).to.be.at.least(1);
      expect(
        sample(text, 'waveline_http_request_duration_seconds_bucket', { method: 'GET', route, status: '200', le: '+Inf' }) - before,
      ).to.equal(3);
      expect(
        sample(text, 'waveline_http_request_duration_seconds_count', { method: 'GET', route: 'unmatched', status: '404' }),
      ).to.be.at.least(1);
      // One series per label set, even with several apps in the process (tests start many).
      const countLines = text
        .split('\n')
        .filter(
          (l) =>
            l.startsWith('waveline_http_request_duration_seconds_count{') &&
            l.includes(`route="${route}"`) &&
            l.includes('status="200"') &&
            l.includes('method="GET"'),
        );
      expect(countLines).to.have.length(1);
      // Bounded labels: no slug, no token, no raw path.
      expect(text).to.not.include(station.slug);
      expect(text).to.not.include(token);
      expect(text).to.not.include('/no/such');
      // The default process metrics are there too.
      expect(text).to.include('process_cpu_seconds_total');
      expect(text).to.include('nodejs_eventloop_lag_seconds');
    });

    it('with METRICS_TOKEN only serves the bearer of that token (401 in the error body otherwise); METRICS=0 is 404', async () => {
      const server = await startTestServer({ env: { METRICS_TOKEN: 'metrics-secret-123' } });
      try {
        const refused = await request(server.url, 'GET', '/metrics');
        expect(refused.status).to.equal(401);
        expect(refused.body.error.code).to.equal('UNAUTHENTICATED');
        expect(refused.body.error.requestId).to.be.a('string');
        expect(refused.headers.get('www-authenticate')).to.equal('Bearer');
        expect((await request(server.url, 'GET', '/metrics', { token: 'metrics-secret-12' })).status).to.equal(401);
        const ok = await request(server.url, 'GET', '/metrics', { token: 'metrics-secret-123' });
        expect(ok.status).to.equal(200);
        expect(ok.text).to.include('waveline_http_request_duration_seconds');
      } finally {
        await server.close();
      }
      const off = await startTestServer({ env: { METRICS: '0' } });
      try {
        const res = await request(off.url, 'GET', '/metrics');
        expect(res.status).to.equal(404);
        expect(res.body.error.code).to.equal('NOT_FOUND');
      } finally {
        await off.close();
      }
    });

    it('counts rate-limit refusals by limit', async () => {
      const server = await startTestServer({ env: { RATE_LIMIT_LISTENER_PER_MINUTE: '2' } });
      try {
        const { station, token } = await listenerFixture(server.url);
        const before = sample((await request(server.url, 'GET', '/metrics')).text, 'waveline_rate_limit_refusals_total', {
          limit: 'listener',
        });
        const statuses = [];
        for (let i = 0; i < 4; i++) statuses.push((await request(server.url, 'GET', `/api/v1/stations/${station.slug}`, { token })).status);
        expect(statuses).to.deep.equal([200, 200, 429, 429]);
        const after = sample((await request(server.url, 'GET', '/metrics')).text, 'waveline_rate_limit_refusals_total', {
          limit: 'listener',
        });
        expect(after - before).to.equal(2);
      } finally {
        await server.close();
      }
    });

    it('counts reads answered from cached bytes before Koa under their own method and status (GET 200, GET 304, HEAD 200)', async () => {
      const server = await sharedServer();
      const { station, token } = await listenerFixture(server.url);
      const route = '/api/v1/stations/{stationSlug}/programs';
      const path = `/api/v1/stations/${station.slug}/programs`;
      const count = (text: string, method: string, status: string) =>
        sample(text, 'waveline_http_request_duration_seconds_count', { method, route, status });
      const first = await request(server.url, 'GET', path, { token });
      expect(first.status).to.equal(200);
      const before = (await request(server.url, 'GET', '/metrics')).text;
      const etag = first.headers.get('etag')!;
      for (let i = 0; i < 2; i++) expect((await request(server.url, 'GET', path, { token })).status).to.equal(200);
      for (let i = 0; i < 3; i++)
        expect((await request(server.url, 'GET', path, { token, headers: { 'if-none-match': etag } })).status).to.equal(304);
      expect((await request(server.url, 'HEAD', path, { token })).status).to.equal(200);
      const after = (await request(server.url, 'GET', '/metrics')).text;
      expect([
        count(after, 'GET', '200') - count(before, 'GET', '200'),
        count(after, 'GET', '304') - count(before, 'GET', '304'),
        count(after, 'HEAD', '200') - count(before, 'HEAD', '200'),
      ]).to.deep.equal([2, 3, 1]);
      const hits = (text: string) => sample(text, 'waveline_cache_lookups_total', { cache: 'schedule', result: 'hit' });
      expect(hits(after) - hits(before), 'every one of them a cache hit').to.equal(6);
    });

    it('offers response caches a hook that counts hits and misses by cache name', async () => {
      const server = await sharedServer();
      const read = async () => (await request(server.url, 'GET', '/metrics')).text;
      const before = await read();
      cacheLookup('test-cache', true);
      cacheLookup('test-cache', true);
      cacheLookup('test-cache', false);
      const after = await read();
      const delta = (result: string) =>
        sample(after, 'waveline_cache_lookups_total', { cache: 'test-cache', result }) -
        sample(before, 'waveline_cache_lookups_total', { cache: 'test-cache', result });
      expect([delta('hit'), delta('miss')]).to.deep.equal([2, 1]);
    });

    it('counts the listener read cache: a first now-playing read misses, the repeat hits', async () => {
      const server = await sharedServer();
      const { station, token } = await listenerFixture(server.url);
      const read = async () => (await request(server.url, 'GET', '/metrics')).text;
      const before = await read();
      for (let i = 0; i < 3; i++)
        expect((await request(server.url, 'GET', `/api/v1/stations/${station.slug}/now-playing`, { token })).status).to.equal(200);
      const after = await read();
      const delta = (result: string) =>
        sample(after, 'waveline_cache_lookups_total', { cache: 'nowPlaying', result }) -
        sample(before, 'waveline_cache_lookups_total', { cache: 'nowPlaying', result });
      expect([delta('hit'), delta('miss')]).to.deep.equal([2, 1]);
    });

    it('is described in /openapi.json', async () => {
      const server = await sharedServer();
      const doc = (await request(server.url, 'GET', '/openapi.json')).body;
      expect(doc.paths['/metrics'].get.responses['200'].content).to.have.property('text/plain; version=0.0.4');
    });
  });

  describe('request log', () => {
    it('writes one line per request: request id, method, route template, status, duration, bytes, station id', async () => {
      const server = await loggedServer({ LOG_LEVEL: 'debug' });
      try {
        const { station, token } = await listenerFixture(server.url);
        const ok = await fetch(`${server.url}/api/v1/stations/${station.slug}`, {
          headers: { authorization: `Bearer ${token}`, 'x-request-id': 'req-log-1' },
        });
        const bytes = (await ok.arrayBuffer()).byteLength;
        const etag = ok.headers.get('etag')!;
        await fetch(`${server.url}/api/v1/stations/${station.slug}`, {
          headers: { authorization: `Bearer ${token}`, 'x-request-id': 'req-log-2', 'if-none-match': etag },
        });
        await fetch(`${server.url}/admin/v1/stations/${station.id}`, {
          headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'x-request-id': 'req-log-3' },
        });
        await fetch(`${server.url}/api/v1/stations/${station.slug}`, { method: 'OPTIONS', headers: { 'x-request-id': 'req-log-4' } });
        const line = (id: string) => eventually(() => server.lines.find((l) => l.requestId === id && l.msg === 'request'));
        const read = (await line('req-log-1'))!;
        // Successful listener reads (the hot path) at debug, the rest at info.
        expect(read).to.include({
          method: 'GET',
          route: '/api/v1/stations/{stationSlug}',
          status: 200,
          bytes,
          stationId: station.id,
          level: 20,
        });
        expect(read.ms).to.be.a('number').and.at.least(0);
        expect(await line('req-log-2')).to.include({ status: 304, bytes: 0, stationId: station.id });
        const adminLine = (await line('req-log-3'))!;
        expect(adminLine).to.include({ method: 'GET', route: '/admin/v1/stations/{stationId}', status: 200, level: 30 });
        expect(adminLine.bytes).to.be.greaterThan(0);
        expect(await line('req-log-4')).to.include({ method: 'OPTIONS', route: 'preflight', status: 204 });
        expect(server.lines.filter((l) => l.requestId === 'req-log-1')).to.have.length(1);
      } finally {
        await server.close();
      }
    });

    it('at info, successful listener reads write no line; refused ones and every other request do', async () => {
      const server = await loggedServer({ LOG_LEVEL: 'info' });
      try {
        const { station, token } = await listenerFixture(server.url);
        const send = async (id: string, path: string, auth?: string) => {
          const res = await fetch(server.url + path, {
            headers: { 'x-request-id': id, ...(auth ? { authorization: `Bearer ${auth}` } : {}) },
          });
          await res.arrayBuffer();
          return res.status;
        };
        expect(await send('quiet-read', `/api/v1/stations/${station.slug}`, token)).to.equal(200);
        expect(await send('refused-read', `/api/v1/stations/${station.slug}`)).to.equal(401);
        expect(await send('bad-query', `/api/v1/stations/${station.slug}?x=1`, token)).to.equal(400);
        expect(await send('health', '/healthz')).to.equal(200);
        const ids = () => server.lines.filter((l) => l.msg === 'request').map((l) => l.requestId);
        await eventually(() => ['refused-read', 'bad-query', 'health'].every((id) => ids().includes(id)));
        expect(ids()).to.not.include('quiet-read');
        expect(server.lines.find((l) => l.requestId === 'refused-read')).to.include({ level: 30, status: 401, stationId: station.id });
      } finally {
        await server.close();
      }
    });

    it('never logs a token, grant or Authorization value, not even from a query string or an unknown path', async () => {
      const server = await loggedServer({ LOG_LEVEL: 'debug' });
      try {
        const { station, token } = await listenerFixture(server.url);
        const ingest = await createToken(server.url, station.id, ['ingest:write']);
        const grant = 'grant-secret-abcdefghijklmnop';
        const requests: Array<[string, RequestInit]> = [
          [`/api/v1/stations/${station.slug}?token=${token}`, { headers: { authorization: `Bearer ${token}` } }],
          [`/api/v1/stations/${station.slug}?access_token=${ingest.token}&grant=${grant}`, {}],
          [`/api/v1/stations/${station.slug}/content`, { headers: { authorization: `Bearer ${token}`, 'x-preview-grant': grant } }],
          [
            `/nowhere/${token}?key=${ingest.token}`,
            { headers: { authorization: `Basic ${Buffer.from(`u:${ADMIN_TOKEN}`).toString('base64')}` } },
          ],
          [
            `/api/v1/integrations/playback?token=${ingest.token}`,
            {
              method: 'POST',
              headers: { authorization: `Bearer ${ingest.token}`, 'content-type': 'application/json' },
              body: '{"artist":"A","title":"B"}',
            },
          ],
          [`/admin/v1/stations?token=${ADMIN_TOKEN}`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } }],
        ];
        for (const [i, [path, init]] of requests.entries()) {
          const res = await fetch(server.url + path, {
            ...init,
            headers: { ...(init.headers as Record<string, string>), 'x-request-id': `secret-${i}` },
          });
          await res.arrayBuffer();
        }
        await eventually(() => requests.every((_, i) => server.lines.some((l) => l.requestId === `secret-${i}` && l.msg === 'request')));
        const all = server.raw.join('\n');
        for (const secret of [token, ingest.token, grant, ADMIN_TOKEN, 'Bearer', 'Basic']) expect(all).to.not.include(secret);
        expect(all).to.not.include('?');
      } finally {
        await server.close();
      }
    });

    it('REQUEST_LOG=0 writes no request lines', async () => {
      const server = await loggedServer({ REQUEST_LOG: '0' });
      try {
        await fetch(`${server.url}/healthz`, { headers: { 'x-request-id': 'quiet-1' } });
        const other = await fetch(`${server.url}/readyz`);
        await other.arrayBuffer();
        expect(server.lines.filter((l) => l.msg === 'request')).to.deep.equal([]);
      } finally {
        await server.close();
      }
    });
  });

  describe('queue dashboard', () => {
    const basic = (password: string) => `Basic ${Buffer.from(`operator:${password}`).toString('base64')}`;

    it('needs the operator token (Bearer, or Basic with the token as password) and asks browsers for it', async function () {
      requiresRedis(this, 'the dashboard shows BullMQ queues; embedded queues are in-process');
      const server = await sharedServer();
      const refused = await request(server.url, 'GET', '/admin/queues');
      expect(refused.status).to.equal(401);
      expect(refused.body.error.code).to.equal('UNAUTHENTICATED');
      expect(refused.headers.get('www-authenticate')).to.match(/^Basic realm="waveline queues"/);
      expect((await request(server.url, 'GET', '/admin/queues', { headers: { authorization: basic('wrong') } })).status).to.equal(401);
      expect((await request(server.url, 'GET', '/admin/queues/api/queues', { token: 'wrong' })).status).to.equal(401);
      const page = await request(server.url, 'GET', '/admin/queues', { headers: { authorization: basic(ADMIN_TOKEN) } });
      expect(page.status).to.equal(200);
      expect(page.headers.get('content-type')).to.match(/text\/html/);
      // The page's assets load with the same credentials, from under /admin/queues.
      const base = /<base href="([^"]+)"/.exec(page.text)![1];
      const script = /<script defer src="([^"]+)"/.exec(page.text)![1];
      const asset = new URL(script, new URL(base, server.url));
      expect(asset.pathname.startsWith('/admin/queues/static/'), asset.pathname).to.equal(true);
      const js = await request(server.url, 'GET', asset.pathname, { headers: { authorization: basic(ADMIN_TOKEN) } });
      expect(js.status).to.equal(200);
      expect(js.headers.get('content-type')).to.match(/javascript/);
      expect((await request(server.url, 'GET', asset.pathname)).status).to.equal(401);
    });

    it('lists the queues with their jobs, read-only by default (actions answer 405, nothing changes)', async function () {
      requiresRedis(this, 'the dashboard shows BullMQ queues; embedded queues are in-process');
      const server = await sharedServer();
      const queue = server.svc.jobs.queue('default');
      const job = await queue.add('health.ping', { at: 'dashboard' }, { delay: 60_000 });
      try {
        const list = await request(server.url, 'GET', '/admin/queues/api/queues?activeQueue=default&status=delayed&page=1', {
          token: ADMIN_TOKEN,
        });
        expect(list.status).to.equal(200);
        const names = list.body.queues.map((q: { name: string }) => q.name);
        expect(names).to.include.members(['default', 'ingest', 'media', 'push']);
        const def = list.body.queues.find((q: { name: string }) => q.name === 'default');
        expect(def.readOnlyMode).to.equal(true);
        expect(def.counts.delayed).to.be.at.least(1);
        const shown = await request(server.url, 'GET', `/admin/queues/api/queues/default/${job.id}`, { token: ADMIN_TOKEN });
        expect(shown.status).to.equal(200);
        expect(shown.body.job).to.include({ id: job.id, name: 'health.ping' });
        const promote = await request(server.url, 'PUT', `/admin/queues/api/queues/default/${job.id}/promote`, { token: ADMIN_TOKEN });
        expect(promote.status).to.equal(405);
        expect(await (await queue.getJob(job.id!))!.getState()).to.equal('delayed');
      } finally {
        await job.remove();
      }
    });
  });

  describe('worker port', () => {
    it('answers /healthz, /readyz and /metrics with jobs completed, retried and failed by name, and queue depths', async function () {
      requiresRedis(this, 'the worker port belongs to `waveline worker`, which runs only with Redis');
      this.timeout(30_000);
      const server = await sharedServer();
      const workers = await startWorkers(server.svc);
      const http = await startWorkerHttp(server.svc, workers.workers, 0);
      const base = `http://127.0.0.1:${http.port}`;
      try {
        expect((await request(base, 'GET', '/healthz')).body).to.deep.equal({ ok: true });
        // On a Redis Cluster /readyz also says what it sees of it (test/roles/processes.test.ts has the details).
        const cluster = onRedisCluster() ? { redisCluster: { state: 'ok', masters: 3, mastersReachable: 3 } } : {};
        expect((await request(base, 'GET', '/readyz')).body).to.deep.equal({
          ok: true,
          postgres: true,
          redis: true,
          ...cluster,
          workers: true,
        });
        expect((await request(base, 'GET', '/nope')).status).to.equal(404);
        const scrape = async () => (await request(base, 'GET', '/metrics')).text;
        const before = await scrape();
        const count = (text: string, name: string, job = 'health.ping') => sample(text, name, { job });
        await server.svc.jobs.enqueue('health.ping', { at: 'metrics' });
        // A payload the handler refuses: one failed attempt that is retried, then the last one that fails for good.
        await server.svc.jobs.queue('default').add('health.ping', { at: 5 }, { attempts: 2, backoff: { type: 'fixed', delay: 10 } });
        const after = (await eventually(
          async () => {
            const text = await scrape();
            return count(text, 'waveline_jobs_failed_total') > count(before, 'waveline_jobs_failed_total') ? text : null;
          },
          { timeoutMs: 15_000, intervalMs: 100 },
        )) as string;
        expect(count(after, 'waveline_jobs_completed_total') - count(before, 'waveline_jobs_completed_total')).to.equal(1);
        expect(count(after, 'waveline_jobs_retried_total') - count(before, 'waveline_jobs_retried_total')).to.equal(1);
        expect(count(after, 'waveline_jobs_failed_total') - count(before, 'waveline_jobs_failed_total')).to.equal(1);
        expect(sample(after, 'waveline_job_duration_seconds_count', { job: 'health.ping', outcome: 'failed' })).to.be.at.least(2);
        expect(after).to.match(/^waveline_queue_jobs\{queue="default",state="failed"\} [1-9]/m);
        expect(after).to.match(/^waveline_queue_jobs\{queue="ingest",state="waiting"\} \d+/m);
        expect(after).to.include('process_resident_memory_bytes');
      } finally {
        await http.close();
        await workers.close();
      }
    });

    it('protects /metrics with METRICS_TOKEN', async () => {
      const server = await startTestServer({ env: { METRICS_TOKEN: 'worker-metrics-token' } });
      const http = await startWorkerHttp(server.svc, [], 0);
      try {
        const base = `http://127.0.0.1:${http.port}`;
        const refused = await request(base, 'GET', '/metrics');
        expect(refused.status).to.equal(401);
        expect(refused.body.error.code).to.equal('UNAUTHENTICATED');
        expect((await request(base, 'GET', '/metrics', { token: 'worker-metrics-token' })).status).to.equal(200);
      } finally {
        await http.close();
        await server.close();
      }
    });

    it("every answer carries X-Request-Id (the client's sane one echoed), and an error body names the same id", async () => {
      const server = await startTestServer();
      const http = await startWorkerHttp(server.svc, [], 0);
      try {
        const base = `http://127.0.0.1:${http.port}`;
        for (const path of ['/healthz', '/readyz', '/metrics', '/elsewhere']) {
          const fresh = await request(base, 'GET', path);
          expect(fresh.headers.get('x-request-id'), path).to.match(/^[0-9a-f-]{36}$/);
          expect((await request(base, 'GET', path, { headers: { 'x-request-id': 'ops-7' } })).headers.get('x-request-id')).to.equal(
            'ops-7',
          );
        }
        const missing = await request(base, 'GET', '/elsewhere', { headers: { 'x-request-id': 'ops-8' } });
        expect(missing.status).to.equal(404);
        expect(missing.body.error.requestId).to.equal('ops-8');
      } finally {
        await http.close();
        await server.close();
      }
    });
  });

  describe('gateway /metrics', () => {
    after(closeTestGateways);

    it('reports open connections, stations subscribed, frames and bytes sent', async () => {
      const server = await sharedServer();
      const gateway = await startTestGateway();
      const base = `http://127.0.0.1:${gateway.port}`;
      const scrape = async () => (await request(base, 'GET', '/metrics')).text;
      const before = await scrape();
      const { station } = await listenerFixture(server.url);
      await writeRow(server.svc, station.id, 'now-playing', 'current', { track: 'x' });
      // The state: the station's schedule, on-air and now-playing rows (there from its creation).
      const a = await FeedClient.ready(gateway.url, realtimePath(station.id), 3);
      const b = await FeedClient.ready(gateway.url, realtimePath(station.id), 3);
      const c = await SseFeedClient.open(base + ssePath(station.id));
      await c.waitSynced(); // the WebSockets (no lastEventId) get no synced
      await writeRow(server.svc, station.id, 'now-playing', 'current', { track: 'y' });
      await a.waitFrames(4);
      await b.waitFrames(4);
      await eventually(() => c.messages.length === 5);
      const during = await scrape();
      const delta = (name: string, transport?: string) =>
        sample(during, name, transport ? { transport } : {}) - sample(before, name, transport ? { transport } : {});
      expect(delta('waveline_gateway_connections', 'websocket')).to.equal(2);
      expect(delta('waveline_gateway_connections', 'sse')).to.equal(1);
      expect(delta('waveline_gateway_stations_subscribed')).to.equal(1);
      // Three state frames and one event to each connection (and synced on SSE), counted per transport.
      expect(delta('waveline_gateway_frames_sent_total', 'websocket')).to.equal(8);
      expect(delta('waveline_gateway_frames_sent_total', 'sse')).to.equal(5);
      expect(delta('waveline_gateway_bytes_sent_total', 'websocket')).to.be.greaterThan(100);
      expect(delta('waveline_gateway_bytes_sent_total', 'sse')).to.be.greaterThan(100);
      a.close();
      b.close();
      c.close();
      await eventually(
        async () =>
          sample(await scrape(), 'waveline_gateway_connections', { transport: 'websocket' }) ===
            sample(before, 'waveline_gateway_connections', { transport: 'websocket' }) &&
          sample(await scrape(), 'waveline_gateway_connections', { transport: 'sse' }) ===
            sample(before, 'waveline_gateway_connections', { transport: 'sse' }),
      );
      // The station's feed stays subscribed 2 s after its last listener (a reconnect is served from memory).
      await eventually(
        async () =>
          sample(await scrape(), 'waveline_gateway_stations_subscribed') === sample(before, 'waveline_gateway_stations_subscribed'),
        { timeoutMs: 5000 },
      );
    });

    it('counts a slow consumer closed past GATEWAY_MAX_BACKPRESSURE_BYTES', async function () {
      this.timeout(60_000);
      const server = await sharedServer();
      const gateway = await startTestGateway({ GATEWAY_MAX_BACKPRESSURE_BYTES: String(64 * 1024) });
      const base = `http://127.0.0.1:${gateway.port}`;
      const slowCloses = (text: string) => sample(text, 'waveline_gateway_slow_consumer_closes_total', { transport: 'websocket' });
      const before = slowCloses((await request(base, 'GET', '/metrics')).text);
      const { station } = await listenerFixture(server.url);
      await writeRow(server.svc, station.id, 'on-air', 'current', null);
      const slow = await FeedClient.ready(gateway.url, realtimePath(station.id), 1);
      slow.ws.pause();
      const big = 'x'.repeat(512 * 1024);
      for (let i = 0; i < 40 && slow.closeCode === null; i++)
        await writeRow(server.svc, station.id, 'content', `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`, { big });
      slow.ws.resume();
      await slow.closed;
      await eventually(async () => slowCloses((await request(base, 'GET', '/metrics')).text) === before + 1);
    });

    it("counts a resync: a module switched on sends the station's listeners back to a snapshot (1012)", async () => {
      const server = await sharedServer();
      const gateway = await startTestGateway();
      const base = `http://127.0.0.1:${gateway.port}`;
      const resyncs = async () =>
        sample((await request(base, 'GET', '/metrics')).text, 'waveline_gateway_resyncs_total', { reason: 'settings_changed' });
      const { station } = await listenerFixture(server.url, { modules: { nowPlaying: false } });
      await writeRow(server.svc, station.id, 'on-air', 'current', null);
      const client = await FeedClient.ready(gateway.url, realtimePath(station.id), 1);
      const before = await resyncs();
      expect((await admin(server.url, 'PATCH', `/stations/${station.id}`, { modules: { nowPlaying: true } })).status).to.equal(200);
      expect((await client.closed).code).to.equal(1012);
      await eventually(async () => (await resyncs()) === before + 1);
    });

    it('protects /metrics with METRICS_TOKEN', async () => {
      const gateway = await startTestGateway({ METRICS_TOKEN: 'gateway-metrics-token' });
      const base = `http://127.0.0.1:${gateway.port}`;
      const refused = await request(base, 'GET', '/metrics');
      expect(refused.status).to.equal(401);
      expect(refused.body.error.code).to.equal('UNAUTHENTICATED');
      const ok = await request(base, 'GET', '/metrics', { token: 'gateway-metrics-token' });
      expect(ok.status).to.equal(200);
      expect(ok.text).to.include('waveline_gateway_connections');
    });
  });
});
