import { createServer, type Server } from 'node:http';
import type { Worker } from 'bullmq';
import { metricsAnswer, startProcessMetrics } from '../src/lib/metrics.ts';
import { dependenciesAnswer } from '../src/lib/readiness.ts';
import { requestIdFrom } from '../src/lib/ids.ts';
import type { Services } from '../src/services.ts';

/**
 * The worker's small HTTP port (WORKER_PORT): `/healthz` (the process answers), `/readyz` (Postgres and
 * Redis answer and every queue's worker runs; 503 otherwise) and `/metrics` (Prometheus text, behind
 * METRICS_TOKEN when set). Errors use the body of docs/errors.md#error-codes; every answer carries
 * `X-Request-Id` (the client's when it is a sane token), as web's and the gateway's do. Nothing else is
 * served.
 */
export async function startWorkerHttp(
  svc: Services,
  workers: Worker[],
  port: number,
): Promise<{ server: Server; port: number; close(): Promise<void> }> {
  startProcessMetrics(svc.config.observability);
  const json = 'application/json; charset=utf-8';
  const server = createServer((req, res) => {
    const requestId = requestIdFrom(typeof req.headers['x-request-id'] === 'string' ? req.headers['x-request-id'] : undefined);
    const send = (status: number, contentType: string, body: string, extra: Record<string, string> = {}) => {
      res.writeHead(status, {
        'X-Request-Id': requestId,
        'Content-Type': contentType,
        'Cache-Control': 'no-store',
        'Content-Length': Buffer.byteLength(body),
        ...extra,
      });
      res.end(body);
    };
    const error = (code: string, message: string) => JSON.stringify({ error: { code, message, requestId } });
    const path = (req.url ?? '/').split('?')[0];
    if (req.method !== 'GET' && req.method !== 'HEAD')
      return send(405, json, error('METHOD_NOT_ALLOWED', 'Only GET is served here.'), { Allow: 'GET, HEAD' });
    if (path === '/healthz') return send(200, json, JSON.stringify({ ok: true }));
    if (path === '/readyz') {
      void ready(svc, workers).then((state) =>
        send(
          state.ok ? 200 : 503,
          json,
          state.ok ? JSON.stringify(state) : error('PROVIDER_UNAVAILABLE', `Not ready: ${JSON.stringify(state)}`),
          state.ok ? {} : { 'Retry-After': '1' },
        ),
      );
      return;
    }
    if (path === '/metrics') {
      void metricsAnswer(req.headers.authorization, svc.config.observability).then(
        (answer) =>
          send(
            answer.status,
            answer.contentType,
            answer.body,
            answer.wwwAuthenticate ? { 'WWW-Authenticate': answer.wwwAuthenticate } : {},
          ),
        () => send(500, json, error('INTERNAL_ERROR', 'Internal server error.')),
      );
      return;
    }
    send(404, json, error('NOT_FOUND', 'No such route.'));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, () => resolve());
  });
  const address = server.address();
  const bound = typeof address === 'object' && address ? address.port : port;
  svc.logger.info({ port: bound }, 'worker http listening');
  return {
    server,
    port: bound,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

async function ready(svc: Services, workers: Worker[]): Promise<{ ok: boolean; postgres: boolean; redis: boolean; workers: boolean }> {
  const { postgres, redis, redisCluster } = await dependenciesAnswer(svc);
  const running = workers.every((w) => w.isRunning());
  return { ok: postgres && redis && running, postgres, redis, workers: running, ...(redisCluster ? { redisCluster } : {}) };
}
