import { createHash } from 'node:crypto';
import { expect } from 'chai';
import { admin, request } from '../../support/http.ts';
import { createStation, createToken, eventually, type TestStation } from '../../support/factories.ts';
import { startTestServer, type TestServer } from '../../support/server.ts';
import { startWorkers } from '../../../workers/index.ts';
import type { Clock } from '../../../src/lib/clock.ts';
import { trustApnsCaForTests } from '../../../src/domains/push/providers/apns.ts';
import {
  makeTestCa,
  startFakeApns,
  startFakeExpo,
  startFakeFcm,
  type FakeApns,
  type FakeExpo,
  type FakeFcm,
  type TestCa,
} from '../../support/fakePush.ts';

// Shared set-up of the push sending tests: the three fakes, a web app with the workers on their URLs.

export interface PushWorld {
  server: TestServer;
  fcm: FakeFcm;
  apns: FakeApns;
  expo: FakeExpo;
  ca: TestCa;
  close(): Promise<void>;
}

export async function startPushWorld(
  env: Record<string, string> = {},
  options: { workers?: boolean; clock?: Clock; fcmTokenSeconds?: number } = {},
): Promise<PushWorld> {
  const ca = makeTestCa();
  // In process, NODE_EXTRA_CA_CERTS (read at process start) cannot be set: the test hook trusts the CA.
  trustApnsCaForTests(ca.ca);
  const [fcm, apns, expo] = await Promise.all([
    startFakeFcm(() => 'ok', { expiresIn: options.fcmTokenSeconds }),
    startFakeApns(ca),
    startFakeExpo(),
  ]);
  const server = await startTestServer({
    clock: options.clock,
    env: {
      PUSH_FCM_URL: fcm.url,
      PUSH_APNS_URL: apns.url,
      PUSH_APNS_SANDBOX_URL: apns.url,
      PUSH_EXPO_URL: expo.url,
      PUSH_EXPO_RECEIPT_DELAY_SECONDS: '0',
      PUSH_REQUEST_TIMEOUT_SECONDS: '3',
      ...env,
    },
  });
  const workers = options.workers === false ? null : await startWorkers(server.svc);
  return {
    server,
    fcm,
    apns,
    expo,
    ca,
    async close() {
      await workers?.close();
      await server.close();
      // Closes the long-lived APNs sessions first: the HTTP/2 server's close waits for them.
      trustApnsCaForTests(null);
      await Promise.all([fcm.close(), apns.close(), expo.close()]);
      ca.remove();
    },
  };
}

export function credentialsBody(world: PushWorld, provider: 'fcm' | 'apns' | 'expo'): Record<string, unknown> {
  if (provider === 'fcm') return { provider, serviceAccount: world.fcm.account };
  if (provider === 'apns') {
    const { keyId, teamId, bundleId, privateKey } = world.apns.key;
    return { provider, keyId, teamId, bundleId, privateKey, environment: 'production' };
  }
  return world.expo.accessToken ? { provider, accessToken: world.expo.accessToken } : { provider };
}

/** A station with the provider, its credentials stored, and a push:register credential. */
export async function pushStation(world: PushWorld, provider: 'fcm' | 'apns' | 'expo', overrides: Record<string, unknown> = {}) {
  const base = world.server.url;
  const station: TestStation = await createStation(base, { push: { provider }, ...overrides });
  const put = await admin(base, 'PUT', `/stations/${station.id}/push/credentials`, credentialsBody(world, provider));
  expect(put.status, JSON.stringify(put.body)).to.equal(200);
  const { token } = await createToken(base, station.id, ['push:register']);
  const register = async (device: string, topics?: Record<string, boolean>) => {
    const res = await request(base, 'POST', `/api/v1/stations/${station.slug}/push/devices`, {
      token,
      json: { token: device, platform: provider === 'apns' ? 'ios' : 'android', provider, ...(topics ? { topics } : {}) },
    });
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
  };
  /** Many devices at once, written straight to the table (the listener route is tested elsewhere). */
  const registerMany = async (devices: string[]) => {
    for (let i = 0; i < devices.length; i += 5000) {
      await world.server.svc.db('push_devices').insert(
        devices.slice(i, i + 5000).map((d) => ({
          station_id: station.id,
          token_hash: createHash('sha256').update(d).digest('hex'),
          token: d,
          platform: provider === 'apns' ? 'ios' : 'android',
          provider,
          topic_alerts: true,
          topic_content: true,
          created_at: new Date(),
          updated_at: new Date(),
        })),
      );
    }
  };
  const send = (json: Record<string, unknown>) => admin(base, 'POST', `/stations/${station.id}/push/notifications`, json);
  const get = async (id: string) => (await admin(base, 'GET', `/stations/${station.id}/push/notifications/${id}`)).body;
  const finished = (id: string, timeoutMs = 20_000) =>
    eventually(
      async () => {
        const view = await get(id);
        return ['done', 'failed', 'expired', 'cancelled'].includes(view.status) && view.counts.pending === 0 ? view : null;
      },
      { timeoutMs, intervalMs: 50 },
    );
  return { station, register, registerMany, send, get, finished };
}

export const deviceCount = async (world: PushWorld, stationId: string): Promise<number> =>
  (await admin(world.server.url, 'GET', `/stations/${stationId}/push/devices/count`)).body.total;

export const countsAddUp = (view: { counts: Record<string, number> }) => {
  const c = view.counts;
  expect(c.sent + c.failed + c.pruned + c.pending, JSON.stringify(c)).to.equal(c.targeted);
};
