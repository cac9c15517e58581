import { expect } from 'chai';
import { postDelivery, urlProblem } from '../../../src/domains/webhooks/transport.ts';
import { emitWebhookEvent } from '../../../src/domains/webhooks/emit.ts';
import { admin } from '../../support/http.ts';
import { createStation, eventually } from '../../support/factories.ts';
import { startReceiver } from '../../support/receiver.ts';
import { startTestServer, useClockedServer, useSharedServerWithWorkers } from '../../support/server.ts';
import { arrived, createHook, deliveries, verifyingSignatures } from './helpers.ts';

// docs/webhooks.md#what-a-delivery-looks-like, docs/webhooks.md#safety: retries, isolation, rotation,
// deactivation, the log and the safety rules.

describe('webhooks: delivery', () => {
  const { server } = useSharedServerWithWorkers();
  const ping = async (stationId: string, webhookId: string) => {
    const res = await admin(server.url, 'POST', `/stations/${stationId}/webhooks/${webhookId}/test`);
    expect(res.status, JSON.stringify(res.body)).to.equal(202);
    return res.body.eventId as string;
  };

  it('a receiver answering 500 then 200 gets the retry with the same webhook-id; the log shows both attempts', async function () {
    this.timeout(30_000);
    const receiver = await startReceiver((n) => (n === 0 ? 500 : 200));
    try {
      const station = await createStation(server.url);
      const hook = await createHook(server.url, station.id, receiver.url);
      const eventId = await ping(station.id, hook.id);
      await eventually(() => receiver.received.length === 2, { timeoutMs: 15_000 });
      const [first, second] = receiver.received;
      expect(first.headers['webhook-id']).to.equal(eventId);
      expect(second.headers['webhook-id']).to.equal(eventId);
      expect(second.body).to.equal(first.body);
      expect(verifyingSignatures(hook.secret, second)).to.equal(1);
      // About 5 s between the attempts (docs/webhooks.md#what-a-delivery-looks-like).
      expect(second.at - first.at).to.be.within(4000, 12_000);
      const log = await arrived(() => deliveries(server.url, station.id, hook.id), 2);
      expect(log.map((d) => [d.attempt, d.status, d.httpStatus])).to.deep.equal([
        [2, 'succeeded', 200],
        [1, 'retrying', 500],
      ]);
      expect(log[1].nextAttemptAt).to.be.a('string');
      expect(log[1]).to.include({ eventId, type: 'ping', error: 'HTTP 500' });
      expect(log[0].durationMs).to.be.a('number');
    } finally {
      await receiver.close();
    }
  });

  it('a receiver that never answers times out after 5 s and is retried, while another endpoint is served at once', async function () {
    this.timeout(30_000);
    const hanging = await startReceiver(() => 'hang');
    const fast = await startReceiver();
    try {
      const station = await createStation(server.url);
      const slow = await createHook(server.url, station.id, hanging.url);
      const quick = await createHook(server.url, station.id, fast.url);
      // Several events to the hanging endpoint first, then one to the fast one.
      for (let i = 0; i < 20; i++) await ping(station.id, slow.id);
      const sentAt = Date.now();
      await ping(station.id, quick.id);
      await eventually(() => fast.received.length === 1, { timeoutMs: 3000 });
      expect(fast.received[0].at - sentAt).to.be.below(1000);
      const log = await arrived(
        async () => (await deliveries(server.url, station.id, slow.id, '?limit=100')).filter((d) => d.error?.startsWith('timeout')),
        1,
        12_000,
      );
      const timedOut = log.find((d) => d.error?.startsWith('timeout'));
      expect(timedOut).to.include({ status: 'retrying', attempt: 1 });
      expect(timedOut.durationMs).to.be.within(4900, 6000);
    } finally {
      await hanging.close();
      await fast.close();
    }
  });

  it('an endpoint that is failing gets its next events on the slow lane (webhooks-retry), away from healthy endpoints', async () => {
    let healthy = false;
    const receiver = await startReceiver(() => (healthy ? 200 : 500));
    try {
      const station = await createStation(server.url);
      const hook = await createHook(server.url, station.id, receiver.url);
      const lanes = async () => {
        const jobs = [
          ...(await server.svc.jobs.queue('webhooks').getJobs(['completed', 'waiting', 'active', 'delayed'])),
          ...(await server.svc.jobs.queue('webhooks-retry').getJobs(['completed', 'waiting', 'active', 'delayed'])),
        ];
        return jobs.filter((j) => j.data.webhookId === hook.id && j.data.attempt === 1).map((j) => `${j.data.eventId}:${j.name}`);
      };
      const first = await ping(station.id, hook.id);
      await eventually(async () => (await server.svc.db('webhooks').where({ id: hook.id }).first()).failing_since !== null);
      // The failing endpoint's next event (not a ping: pings always take the fast lane) goes to the slow lane.
      await admin(server.url, 'PATCH', `/stations/${station.id}/webhooks/${hook.id}`, { events: ['content.published'] });
      healthy = true;
      const second = await emitWebhookEvent(server.svc, station.id, 'content.published', { type: 'news', id: 'x', revision: 1 });
      expect(await lanes()).to.include.members([`${first}:webhooks.deliver`, `${second}:webhooks.retry`]);
      // Delivered there, the endpoint is healthy again: the next event takes the fast lane.
      await eventually(async () => (await server.svc.db('webhooks').where({ id: hook.id }).first()).failing_since === null);
      const third = await emitWebhookEvent(server.svc, station.id, 'content.published', { type: 'news', id: 'y', revision: 1 });
      expect(await lanes()).to.include(`${third}:webhooks.deliver`);
    } finally {
      await receiver.close();
    }
  });

  it('redirects are not followed: a 302 is a failed attempt and its target hears nothing', async () => {
    const target = await startReceiver();
    const redirecting = await startReceiver((_n, _req, res) => {
      res.writeHead(302, { location: target.url }).end();
      return 'handled';
    });
    try {
      const station = await createStation(server.url);
      const hook = await createHook(server.url, station.id, redirecting.url);
      await ping(station.id, hook.id);
      const [row] = await arrived(() => deliveries(server.url, station.id, hook.id));
      expect(row).to.include({ status: 'retrying', httpStatus: 302 });
      expect(row.error).to.match(/^redirect not followed/);
      expect(target.received).to.have.length(0);
    } finally {
      await target.close();
      await redirecting.close();
    }
  });

  it('admin routes: list without secrets, get, patch, delete, 20 a station, validation', async () => {
    const station = await createStation(server.url);
    const base = `/stations/${station.id}/webhooks`;
    const created = await admin(server.url, 'POST', base, {
      url: 'https://example.org/hook',
      events: ['content.published'],
      description: 'site',
    });
    expect(created.status).to.equal(201);
    expect(created.body).to.include({ url: 'https://example.org/hook', description: 'site', active: true });
    expect(created.body.secret).to.match(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(Buffer.from(created.body.secret.slice(6), 'base64')).to.have.length(32);
    const list = await admin(server.url, 'GET', base);
    expect(list.body.webhooks).to.have.length(1);
    expect(list.text).not.to.include(created.body.secret.slice(6));
    expect(list.body.webhooks[0]).not.to.have.property('secret');
    const one = await admin(server.url, 'GET', `${base}/${created.body.id}`);
    expect(one.body).to.deep.equal(list.body.webhooks[0]);
    const patched = await admin(server.url, 'PATCH', `${base}/${created.body.id}`, {
      events: ['schedule.changed', 'broadcast.started'],
      description: null,
    });
    expect(patched.body).to.include({ description: null });
    expect(patched.body.events).to.deep.equal(['schedule.changed', 'broadcast.started']);
    // The secret is stored encrypted, never as given.
    const stored = await server.svc.db('webhooks').where({ id: created.body.id }).first();
    expect(stored.secret_enc).not.to.include(created.body.secret.slice(6));
    // Validation: no events, unknown event, bad url.
    expect((await admin(server.url, 'POST', base, { url: 'https://example.org', events: [] })).status).to.equal(400);
    const unknown = await admin(server.url, 'POST', base, { url: 'https://example.org', events: ['content.publish'] });
    expect(unknown.status).to.equal(400);
    expect(JSON.stringify(unknown.body)).to.include('content.published');
    expect((await admin(server.url, 'POST', base, { url: 'not a url', events: ['ping'] })).status).to.equal(400);
    for (let i = 1; i < 20; i++)
      expect((await admin(server.url, 'POST', base, { url: `https://example.org/${i}`, events: ['content.published'] })).status).to.equal(
        201,
      );
    const over = await admin(server.url, 'POST', base, { url: 'https://example.org/21', events: ['content.published'] });
    expect(over.status).to.equal(409);
    expect(over.body.error.code).to.equal('CONFLICT');
    expect((await admin(server.url, 'DELETE', `${base}/${created.body.id}`)).status).to.equal(204);
    expect((await admin(server.url, 'GET', `${base}/${created.body.id}`)).status).to.equal(404);
    expect((await admin(server.url, 'GET', `/stations/nope/webhooks`)).status).to.equal(404);
  });

  it('the delivery log pages newest first with a cursor bound to the webhook', async () => {
    const receiver = await startReceiver();
    try {
      const station = await createStation(server.url);
      const hook = await createHook(server.url, station.id, receiver.url);
      const other = await createHook(server.url, station.id, receiver.url);
      for (let i = 0; i < 3; i++) await ping(station.id, hook.id);
      await eventually(async () => (await deliveries(server.url, station.id, hook.id)).length === 3);
      const first = await admin(server.url, 'GET', `/stations/${station.id}/webhooks/${hook.id}/deliveries?limit=2`);
      expect(first.body.deliveries).to.have.length(2);
      const second = await admin(
        server.url,
        'GET',
        `/stations/${station.id}/webhooks/${hook.id}/deliveries?limit=2&cursor=${first.body.nextCursor}`,
      );
      expect(second.body.deliveries).to.have.length(1);
      expect(second.body.nextCursor).to.equal(null);
      const all = [...first.body.deliveries, ...second.body.deliveries];
      expect(new Set(all.map((d) => d.eventId)).size).to.equal(3);
      expect(all.map((d) => d.createdAt)).to.deep.equal([...all.map((d) => d.createdAt)].sort().reverse());
      const misuse = await admin(
        server.url,
        'GET',
        `/stations/${station.id}/webhooks/${other.id}/deliveries?cursor=${first.body.nextCursor}`,
      );
      expect(misuse.status).to.equal(400);
    } finally {
      await receiver.close();
    }
  });
});

describe('webhooks: rotation and deactivation (injected clock)', () => {
  const { clock, server } = useClockedServer('2026-11-20T10:00:00Z', { workers: true });

  it('after rotate-secret both signatures go out for 24 h, then only the new one', async () => {
    const receiver = await startReceiver();
    try {
      const station = await createStation(server.url);
      const hook = await createHook(server.url, station.id, receiver.url);
      const rotated = await admin(server.url, 'POST', `/stations/${station.id}/webhooks/${hook.id}/rotate-secret`);
      expect(rotated.status).to.equal(200);
      expect(rotated.body.secret)
        .to.match(/^whsec_/)
        .and.not.equal(hook.secret);
      expect(rotated.body.previousSecretExpiresAt).to.equal('2026-11-21T10:00:00.000Z');
      await admin(server.url, 'POST', `/stations/${station.id}/webhooks/${hook.id}/test`);
      await eventually(() => receiver.received.length === 1);
      const during = receiver.received[0];
      expect(String(during.headers['webhook-signature']).split(' ')).to.have.length(2);
      expect(verifyingSignatures(hook.secret, during)).to.equal(1);
      expect(verifyingSignatures(rotated.body.secret, during)).to.equal(1);
      clock.advance(24 * 3600_000 + 1000);
      await admin(server.url, 'POST', `/stations/${station.id}/webhooks/${hook.id}/test`);
      await eventually(() => receiver.received.length === 2);
      const afterwards = receiver.received[1];
      expect(String(afterwards.headers['webhook-signature']).split(' ')).to.have.length(1);
      expect(verifyingSignatures(hook.secret, afterwards)).to.equal(0);
      expect(verifyingSignatures(rotated.body.secret, afterwards)).to.equal(1);
    } finally {
      await receiver.close();
    }
  });

  it('the delivery log keeps attempts 7 days', async () => {
    const receiver = await startReceiver();
    try {
      const station = await createStation(server.url);
      const hook = await createHook(server.url, station.id, receiver.url);
      await admin(server.url, 'POST', `/stations/${station.id}/webhooks/${hook.id}/test`);
      await arrived(() => deliveries(server.url, station.id, hook.id));
      clock.advance(7 * 24 * 3600_000 - 60_000);
      expect(await deliveries(server.url, station.id, hook.id)).to.have.length(1);
      clock.advance(120_000);
      expect(await deliveries(server.url, station.id, hook.id)).to.have.length(0);
    } finally {
      await receiver.close();
    }
  });

  it('an endpoint that failed every delivery for 3 days is set active: false; a success in between starts over', async () => {
    let healthy = false;
    const receiver = await startReceiver(() => (healthy ? 200 : 503));
    try {
      const station = await createStation(server.url);
      const hook = await createHook(server.url, station.id, receiver.url);
      const base = `/stations/${station.id}/webhooks/${hook.id}`;
      const attempts = async (n: number) =>
        eventually(async () => (await deliveries(server.url, station.id, hook.id, '?limit=100')).length >= n);
      await admin(server.url, 'POST', `${base}/test`);
      await attempts(1);
      clock.advance(2 * 24 * 3600_000);
      // A success after two days of failures: the streak ends.
      healthy = true;
      await admin(server.url, 'POST', `${base}/test`);
      await attempts(2);
      healthy = false;
      clock.advance(2 * 24 * 3600_000);
      await admin(server.url, 'POST', `${base}/test`);
      await attempts(3);
      expect((await admin(server.url, 'GET', base)).body.active).to.equal(true);
      // Three days and a bit after the first failure of the new streak: switched off.
      clock.advance(3 * 24 * 3600_000 + 60_000);
      await admin(server.url, 'POST', `${base}/test`);
      await eventually(async () => (await admin(server.url, 'GET', base)).body.active === false);
      // Switched on again by the operator: the period starts over.
      expect((await admin(server.url, 'PATCH', base, { active: true })).body.active).to.equal(true);
      expect((await server.svc.db('webhooks').where({ id: hook.id }).first()).failing_since).to.equal(null);
    } finally {
      await receiver.close();
    }
  });
});

describe('webhooks: safety rules without WEBHOOKS_ALLOW_INSECURE', () => {
  it('refuses http://, loopback, private and IPv6 unique-local targets, and a hostname resolving to 127.0.0.1 after DNS', async () => {
    expect(urlProblem('http://example.org/hook', false)).to.match(/https/);
    for (const url of [
      'https://127.0.0.1/hook',
      'https://[::1]/hook',
      'https://10.1.2.3/hook',
      'https://192.168.0.10/',
      'https://172.20.1.1/',
      'https://169.254.169.254/latest',
      'https://[fd12:3456::1]/',
      'https://[fe80::1]/',
      'https://[::ffff:127.0.0.1]/',
    ]) {
      expect(urlProblem(url, false), url).to.match(/loopback, private/);
    }
    expect(urlProblem('https://example.org/hook', false)).to.equal(null);
    // A real local receiver behind a name that resolves to 127.0.0.1: refused at connect time, never reached.
    const receiver = await startReceiver();
    try {
      const port = new URL(receiver.url).port;
      const result = await postDelivery(`https://localhost:${port}/hook`, {}, '{}', false);
      expect(result.ok).to.equal(false);
      expect(result.error).to.match(/^refused: localhost resolves to a forbidden address \(127\.0\.0\.1\)/);
      const direct = await postDelivery(receiver.url, {}, '{}', false);
      expect(direct.error).to.match(/^refused: url must use https/);
      expect(receiver.received).to.have.length(0);
      // With the development flag the same receiver is reached (the tests' setting).
      expect((await postDelivery(receiver.url, {}, '{}', true)).ok).to.equal(true);
    } finally {
      await receiver.close();
    }
  });

  it('a web role without the flag refuses such URLs when a webhook is created (400 VALIDATION_ERROR)', async () => {
    const server = await startTestServer({ env: { WEBHOOKS_ALLOW_INSECURE: '0' } });
    try {
      const station = await createStation(server.url);
      for (const url of ['http://example.org/hook', 'https://127.0.0.1/hook', 'https://[fd00::1]/hook', 'https://10.0.0.1/']) {
        const res = await admin(server.url, 'POST', `/stations/${station.id}/webhooks`, { url, events: ['content.published'] });
        expect(res.status, url).to.equal(400);
        expect(res.body.error.code).to.equal('VALIDATION_ERROR');
        expect(res.body.error.issues[0].path).to.equal('url');
      }
    } finally {
      await server.close();
    }
  });
});
