import { testMode } from '../../support/mode.ts';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { startTestServer } from '../../support/server.ts';
import { request } from '../../support/http.ts';
import { createStation, createToken, eventually } from '../../support/factories.ts';
import { freePort } from '../../support/ports.ts';
import { startProcess } from '../../support/processes.ts';

// Push routes: the 'push' rate limit, and device tokens never reaching the log.

describe('push rate limit', () => {
  it('429 RATE_LIMITED with Retry-After once the credential’s push bucket is empty', async () => {
    const server = await startTestServer({ env: { RATE_LIMIT_PUSH_PER_MINUTE: '2' } });
    try {
      const station = await createStation(server.url, { push: { provider: 'fcm' } });
      const { token } = await createToken(server.url, station.id, ['push:register']);
      const path = `/api/v1/stations/${station.slug}/push/devices`;
      const send = () => request(server.url, 'DELETE', path, { token, json: { token: 'device' } });
      expect((await send()).status).to.equal(200);
      const second = await send();
      expect(second.headers.get('ratelimit-policy')).to.equal('"push";q=2;w=60');
      const third = await send();
      expect(third.status).to.equal(429);
      expect(third.body.error.code).to.equal('RATE_LIMITED');
      expect(Number(third.headers.get('retry-after'))).to.be.greaterThan(0);
    } finally {
      await server.close();
    }
  });
});

describe('push device tokens in logs', function () {
  this.timeout(30_000);

  it('a web process logging at trace level never writes a device token, whatever the outcome', async () => {
    const port = await freePort();
    // Embedded, the web role runs inside `waveline dev` on a data directory of its own (web alone needs Redis).
    const embedded = testMode() === 'embedded';
    const dataDir = embedded ? mkdtempSync(join(tmpdir(), 'waveline-push-log-')) : '';
    const own = embedded
      ? { DATABASE_URL: '', REDIS_URL: '', WAVELINE_DATA_DIR: dataDir, WAVELINE_DEMO: '0', GATEWAY_PORT: String(await freePort()) }
      : {};
    const proc = startProcess([embedded ? 'dev' : 'web'], { PORT: String(port), LOG_LEVEL: 'trace', ...own });
    try {
      const base = `http://127.0.0.1:${port}`;
      await eventually(async () => (await fetch(`${base}/healthz`)).ok, { timeoutMs: 15_000, intervalMs: 100 });
      const station = await createStation(base, { push: { provider: 'apns' } });
      const { token } = await createToken(base, station.id, ['push:register']);
      const path = `/api/v1/stations/${station.slug}/push/devices`;
      const device = `secret-device-token-${Math.random().toString(36).slice(2)}`;
      const calls: Array<[string, unknown]> = [
        ['POST', { token: device, platform: 'ios', provider: 'apns' }],
        ['POST', { token: device, platform: 'ios', provider: 'fcm' }],
        ['POST', { token: device, platform: 'windows', provider: 'apns' }],
        ['PATCH', { token: device, topics: { alerts: false } }],
        ['PATCH', { token: `${device}-unknown`, topics: { alerts: false } }],
        ['PATCH', { token: device, topics: { alerts: 'off' } }],
        ['DELETE', { token: device }],
      ];
      for (const [method, json] of calls) expect((await request(base, method, path, { token, json })).status).to.be.below(500);
      expect(
        (await request(base, 'POST', path, { token, body: `{"token":"${device}"`, headers: { 'content-type': 'application/json' } }))
          .status,
      ).to.equal(400);
    } finally {
      proc.child.kill('SIGTERM');
      await proc.exited;
      if (dataDir) rmSync(dataDir, { recursive: true, force: true });
    }
    const output = proc.output();
    expect(output, 'the process did log').to.include('web listening');
    expect(output).not.to.include('secret-device-token-');
  });
});
