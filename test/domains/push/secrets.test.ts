import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { admin, request } from '../../support/http.ts';
import { createStation, createToken, eventually } from '../../support/factories.ts';
import { testMode } from '../../support/mode.ts';
import { freePort } from '../../support/ports.ts';
import { startProcess } from '../../support/processes.ts';
import { makeTestCa, startFakeApns, startFakeExpo, startFakeFcm } from '../../support/fakePush.ts';

// docs/push.md#credentials: private keys and access tokens are never logged. Web and worker run
// at LOG_LEVEL=trace through storing, reading, refusing and using the credentials; their output never
// holds a private key, an access token (Expo's, or the FCM access tokens the worker obtained) or a device token.

/** A distinctive piece of a PEM key's body (the line-wrapped base64 in the middle). */
const keyBody = (pem: string): string => pem.split('\n').slice(2, 4).join('');

describe('push credentials in logs', function () {
  this.timeout(90_000);

  it('web and worker at trace level never write a private key, an access token or a device token', async () => {
    const ca = makeTestCa();
    const [fcm, apns, expoFake] = await Promise.all([
      startFakeFcm(),
      startFakeApns(ca),
      startFakeExpo(() => 'ok', { accessToken: `expo-secret-${Date.now()}` }),
    ]);
    const port = await freePort();
    const embedded = testMode() === 'embedded';
    const dataDir = embedded ? mkdtempSync(join(tmpdir(), 'waveline-push-secrets-')) : '';
    const env = {
      LOG_LEVEL: 'trace',
      PORT: String(port),
      WORKER_PORT: '0',
      PUSH_FCM_URL: fcm.url,
      PUSH_APNS_URL: apns.url,
      PUSH_EXPO_URL: expoFake.url,
      NODE_EXTRA_CA_CERTS: ca.caFile,
      ...(embedded
        ? { DATABASE_URL: '', REDIS_URL: '', WAVELINE_DATA_DIR: dataDir, WAVELINE_DEMO: '0', GATEWAY_PORT: String(await freePort()) }
        : {}),
    };
    const children = (embedded ? ['dev'] : ['web', 'worker']).map((role) => startProcess([role], env));
    const output = () => children.map((c) => c.output()).join('');
    const devices: string[] = [];
    try {
      const base = `http://127.0.0.1:${port}`;
      await eventually(async () => (await fetch(`${base}/healthz`)).ok && output().includes('workers ready'), {
        timeoutMs: 30_000,
        intervalMs: 100,
      });
      const bodies = {
        fcm: { provider: 'fcm', serviceAccount: fcm.account },
        apns: {
          provider: 'apns',
          keyId: apns.key.keyId,
          teamId: apns.key.teamId,
          bundleId: apns.key.bundleId,
          privateKey: apns.key.privateKey,
          environment: 'production',
        },
        expo: { provider: 'expo', accessToken: expoFake.accessToken },
      } as const;
      const ids: Array<[string, string]> = [];
      for (const provider of ['fcm', 'apns', 'expo'] as const) {
        const station = await createStation(base, { push: { provider } });
        const path = `/stations/${station.id}/push/credentials`;
        // Refused (another provider), malformed (a key that does not parse), then stored and read back.
        const other = provider === 'fcm' ? bodies.apns : bodies.fcm;
        expect((await admin(base, 'PUT', path, other)).status).to.equal(409);
        const broken =
          provider === 'fcm'
            ? { ...bodies.fcm, serviceAccount: { ...fcm.account, private_key: fcm.account.private_key.slice(0, 200) } }
            : provider === 'apns'
              ? { ...bodies.apns, privateKey: apns.key.privateKey.slice(0, 90) }
              : { ...bodies.expo, unknown: expoFake.accessToken };
        expect((await admin(base, 'PUT', path, broken)).status).to.equal(400);
        expect((await admin(base, 'PUT', path, bodies[provider])).status).to.equal(200);
        expect((await admin(base, 'GET', path)).status).to.equal(200);
        const { token } = await createToken(base, station.id, ['push:register']);
        const device =
          provider === 'expo'
            ? `ExponentPushToken[secret-device-${Math.random().toString(36).slice(2)}]`
            : `secret-device-${Math.random().toString(36).slice(2)}`;
        devices.push(device);
        const reg = await request(base, 'POST', `/api/v1/stations/${station.slug}/push/devices`, {
          token,
          json: { token: device, platform: provider === 'apns' ? 'ios' : 'android', provider },
        });
        expect(reg.status).to.equal(200);
        const sent = await admin(base, 'POST', `/stations/${station.id}/push/notifications`, { topic: 'alerts', title: 'Secret test' });
        expect(sent.status).to.equal(202);
        ids.push([station.id, sent.body.id]);
      }
      for (const [stationId, id] of ids) {
        await eventually(async () => (await admin(base, 'GET', `/stations/${stationId}/push/notifications/${id}`)).body.status === 'done', {
          timeoutMs: 30_000,
          intervalMs: 100,
        });
      }
      expect(fcm.issued.length).to.be.at.least(1);
    } finally {
      for (const c of children) c.child.kill('SIGTERM');
      await Promise.all(children.map((c) => c.exited));
      await Promise.all([fcm.close(), apns.close(), expoFake.close()]);
      ca.remove();
      if (dataDir) rmSync(dataDir, { recursive: true, force: true });
    }
    expect(output(), 'the processes did log').to.include('web listening');
    for (const secret of [
      keyBody(fcm.account.private_key),
      keyBody(apns.key.privateKey),
      expoFake.accessToken as string,
      ...fcm.issued,
      ...devices,
    ]) {
      expect(output().includes(secret), `log holds a secret (${secret.slice(0, 12)}…)`).to.equal(false);
    }
    expect(output()).not.to.include('PRIVATE KEY');
  });
});
