import { expect } from 'chai';
import { randomUUID } from 'node:crypto';
import { sharedServer, type TestServer } from '../../support/server.ts';
import { admin, request } from '../../support/http.ts';
import { ADMIN_TOKEN } from '../../support/env.ts';
import { createStation, eventually } from '../../support/factories.ts';
import { startWorkers } from '../../../workers/index.ts';
import { asKey, createKey } from './helpers.ts';
import { commitHooks } from '../../../src/lib/commitHooks.ts';

// The audit trail (docs/operations.md#the-audit-log).

const REFUSED_LABEL = 'audit-refused';

describe('audit log: one entry per authenticated admin write', () => {
  let server: TestServer;
  before(async () => {
    server = await sharedServer();
    // Real storage failure: the database itself refuses entries of keys with this label.
    await server.svc.db.raw(`
      DROP TRIGGER IF EXISTS audit_test_refuse ON audit_log;
      CREATE OR REPLACE FUNCTION audit_test_refuse() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN RAISE EXCEPTION 'audit storage refused (test)'; END $$;
      CREATE TRIGGER audit_test_refuse BEFORE INSERT ON audit_log FOR EACH ROW
        WHEN (NEW.key_label = '${REFUSED_LABEL}') EXECUTE FUNCTION audit_test_refuse();
    `);
  });
  after(async () => {
    await server.svc.db.raw('DROP TRIGGER IF EXISTS audit_test_refuse ON audit_log; DROP FUNCTION IF EXISTS audit_test_refuse();');
  });

  const entriesOf = (stationId: string) => server.svc.db('audit_log').where({ station_id: stationId }).orderBy('created_at');

  async function stationWithNews() {
    const station = await createStation(server.url);
    const type = await admin(server.url, 'PUT', `/stations/${station.id}/content-types/news`, {
      label: 'News',
      fields: [{ key: 'title', label: 'Title', kind: 'text', required: true }],
    });
    expect(type.status).to.equal(200);
    return station;
  }

  it('records root and operator-key writes with who, what, where and how it ended — never a body, token or secret', async () => {
    const station = await stationWithNews();
    const { id: keyId, key } = await createKey(server.url, {
      label: 'newsroom',
      stations: [station.id],
      scopes: ['content:write', 'credentials:write'],
    });
    const recordId = randomUUID();
    const put = await request(server.url, 'PUT', `/admin/v1/stations/${station.id}/records/${recordId}?draft=1`, {
      token: key,
      json: { type: 'news', values: { title: 'Secret headline 7f3a' } },
      headers: { 'x-request-id': 'req-audit-1' },
    });
    expect(put.status, JSON.stringify(put.body)).to.equal(200);
    const credential = await asKey(server.url, key, 'POST', `/stations/${station.id}/credentials`, { scopes: ['listener:read'] });
    expect(credential.status).to.equal(201);

    const rows = await entriesOf(station.id);
    const byAction: Record<string, Record<string, unknown>> = Object.fromEntries(rows.map((row: { action: string }) => [row.action, row]));
    expect(byAction['content.type-save']).to.include({ key_id: 'root', key_label: 'root', method: 'PUT', target: 'news', status: 200 });
    expect(byAction['content.save']).to.include({
      key_id: keyId,
      key_label: 'newsroom',
      method: 'PUT',
      path: `/admin/v1/stations/${station.id}/records/${recordId}`,
      station_id: station.id,
      target: recordId,
      status: 200,
      request_id: 'req-audit-1',
    });
    expect(byAction['content.save'].client_ip).to.match(/127\.0\.0\.1|::1/);
    expect(byAction['credential.create']).to.include({ key_id: keyId, status: 201, target: credential.body.id });
    const stored = JSON.stringify(rows);
    for (const secret of ['Secret headline', credential.body.token, key, ADMIN_TOKEN]) expect(stored).not.to.include(secret);
  });

  it('records refused writes after authentication with their status (403, 404, 400), and nothing for a failed authentication', async () => {
    const station = await stationWithNews();
    const { key } = await createKey(server.url, { label: 'plays only', stations: [station.id], scopes: ['plays:read', 'content:write'] });
    expect(
      (await asKey(server.url, key, 'POST', `/stations/${station.id}/push/notifications`, { topic: 'alerts', title: 't', body: 'b' }))
        .status,
    ).to.equal(403);
    expect((await asKey(server.url, key, 'PUT', `/stations/${station.id}/records/${randomUUID()}`, { values: {} })).status).to.equal(400);
    expect((await asKey(server.url, key, 'POST', `/stations/${station.id}/records/${randomUUID()}/publish`)).status).to.equal(404);
    expect(
      (await asKey(server.url, `wvo_${'x'.repeat(40)}`, 'PUT', `/stations/${station.id}/records/${randomUUID()}`, {})).status,
    ).to.equal(401);
    const statuses = (await entriesOf(station.id)).map((row: { action: string; status: number }) => `${row.action} ${row.status}`);
    expect(statuses.slice(1)).to.deep.equal(['push.send 403', 'content.save 400', 'content.publish 404']);
  });

  it('leaves no promise hook on for listener reads once the admin writes are answered (the audit storage is disabled when idle)', async () => {
    // Node 22's AsyncLocalStorage keeps a promise hook on in the whole process while it is enabled: left
    // on after the first admin write, it made every cached listener read cost about 30 % more CPU.
    const station = await stationWithNews();
    const writes = await Promise.all(
      [0, 1, 2].map(() =>
        admin(server.url, 'PUT', `/stations/${station.id}/records/${randomUUID()}`, { type: 'news', values: { title: 'Hook' } }),
      ),
    );
    expect(writes.map((w) => w.status)).to.deep.equal([200, 200, 200]);
    expect((await entriesOf(station.id)).filter((e) => e.action === 'content.save')).to.have.length(3);
    expect((commitHooks as unknown as { enabled: boolean }).enabled, 'the storage is disabled with no audited request left').to.equal(
      false,
    );
  });

  it('answers 503 PROVIDER_UNAVAILABLE and rolls the change back when the entry cannot be stored', async () => {
    const station = await stationWithNews();
    const { key } = await createKey(server.url, {
      label: REFUSED_LABEL,
      stations: [station.id],
      scopes: ['content:write', 'credentials:write'],
    });
    const recordId = randomUUID();
    const put = await asKey(server.url, key, 'PUT', `/stations/${station.id}/records/${recordId}`, {
      type: 'news',
      values: { title: 'x' },
    });
    expect(put.status, JSON.stringify(put.body)).to.equal(503);
    expect(put.body.error.code).to.equal('PROVIDER_UNAVAILABLE');
    expect(await server.svc.db('records').where({ id: recordId }).first()).to.equal(undefined);

    // A record the root key saved: the key's publish is refused and nothing is published.
    const saved = await admin(server.url, 'PUT', `/stations/${station.id}/records/${recordId}`, { type: 'news', values: { title: 'x' } });
    expect(saved.status).to.equal(200);
    const publish = await asKey(server.url, key, 'POST', `/stations/${station.id}/records/${recordId}/publish`);
    expect(publish.status).to.equal(503);
    expect((await server.svc.db('records').where({ id: recordId }).first()).published_revision).to.equal(null);

    const before = await server.svc.db('credentials').where({ station_id: station.id }).count<{ count: number }[]>('* as count');
    const credential = await asKey(server.url, key, 'POST', `/stations/${station.id}/credentials`, { scopes: ['listener:read'] });
    expect(credential.status).to.equal(503);
    const after = await server.svc.db('credentials').where({ station_id: station.id }).count<{ count: number }[]>('* as count');
    expect(Number(after[0].count)).to.equal(Number(before[0].count));
  });

  it('records operator-key operations (root list only) and serves station and root reads: newest first, filters, limits, signed cursors', async () => {
    const station = await stationWithNews();
    const other = await stationWithNews();
    const reader = await createKey(server.url, { label: 'auditor', stations: [station.id], scopes: ['audit:read'] });
    const writer = await createKey(server.url, { label: 'writer', stations: [station.id, other.id], scopes: ['content:write'] });
    expect((await admin(server.url, 'POST', `/operator-keys/${writer.id}/rotate`)).status).to.equal(201);
    const ids = [randomUUID(), randomUUID(), randomUUID()];
    for (const id of ids) {
      expect(
        (await admin(server.url, 'PUT', `/stations/${station.id}/records/${id}`, { type: 'news', values: { title: 't' } })).status,
      ).to.equal(200);
    }
    expect((await admin(server.url, 'POST', `/stations/${station.id}/records/${ids[0]}/publish`)).status).to.equal(200);

    const all = await asKey(server.url, reader.key, 'GET', `/stations/${station.id}/audit`);
    expect(all.status, JSON.stringify(all.body)).to.equal(200);
    expect(all.body.entries.map((e: { action: string }) => e.action)).to.deep.equal([
      'content.publish',
      'content.save',
      'content.save',
      'content.save',
      'content.type-save',
    ]);
    expect(all.body.nextCursor).to.equal(null);
    expect(Object.keys(all.body.entries[0]).sort()).to.deep.equal(
      ['action', 'at', 'clientIp', 'id', 'keyId', 'keyLabel', 'method', 'path', 'requestId', 'stationId', 'status', 'target'].sort(),
    );
    // The other station's entries and the key operations are not in this list.
    expect(all.body.entries.every((e: { stationId: string }) => e.stationId === station.id)).to.equal(true);

    const filtered = await asKey(server.url, reader.key, 'GET', `/stations/${station.id}/audit?action=content.save&keyId=root&limit=2`);
    expect(filtered.status, JSON.stringify(filtered.body)).to.equal(200);
    expect(filtered.body.entries.map((e: { target: string }) => e.target)).to.deep.equal([ids[2], ids[1]]);
    const next = await asKey(
      server.url,
      reader.key,
      'GET',
      `/stations/${station.id}/audit?action=content.save&keyId=root&limit=2&cursor=${encodeURIComponent(filtered.body.nextCursor)}`,
    );
    expect(next.status, JSON.stringify(next.body)).to.equal(200);
    expect(next.body.entries.map((e: { target: string }) => e.target)).to.deep.equal([ids[0]]);
    expect(next.body.nextCursor).to.equal(null);
    const cursor = encodeURIComponent(filtered.body.nextCursor);
    expect((await asKey(server.url, reader.key, 'GET', `/stations/${station.id}/audit?limit=2&cursor=${cursor}`)).status).to.equal(400);
    expect((await asKey(server.url, reader.key, 'GET', `/stations/${station.id}/audit?cursor=${cursor}x`)).status).to.equal(400);
    for (const limit of [0, 101])
      expect((await asKey(server.url, reader.key, 'GET', `/stations/${station.id}/audit?limit=${limit}`)).status).to.equal(400);

    const publishedAt = Date.parse(all.body.entries[0].at);
    const window = await asKey(
      server.url,
      reader.key,
      'GET',
      `/stations/${station.id}/audit?from=${new Date(publishedAt).toISOString()}&to=${new Date(publishedAt + 1).toISOString()}`,
    );
    expect(window.body.entries.map((e: { action: string }) => e.action)).to.include('content.publish');
    const before = await asKey(
      server.url,
      reader.key,
      'GET',
      `/stations/${station.id}/audit?to=${new Date(publishedAt).toISOString()}&action=content.publish`,
    );
    expect(before.body.entries).to.deep.equal([]);

    expect((await asKey(server.url, reader.key, 'GET', '/audit')).status).to.equal(403);
    const root = await admin(server.url, 'GET', `/audit?keyId=root&action=operator-key.rotate&limit=100`);
    expect(root.status).to.equal(200);
    const rotation = root.body.entries.find((e: { target: string }) => e.target === writer.id);
    expect(rotation).to.include({ method: 'POST', path: `/admin/v1/operator-keys/${writer.id}/rotate`, stationId: null, status: 201 });
    const created = await admin(server.url, 'GET', `/audit?action=operator-key.create&limit=100`);
    expect(created.body.entries.map((e: { target: string }) => e.target)).to.include(reader.id);
  });

  it("keeps entries 400 days: the worker's daily audit.prune drops older ones", async () => {
    const workers = await startWorkers(server.svc);
    try {
      const schedulers = await server.svc.jobs.queue('default').getJobSchedulers();
      expect(schedulers.map((s: { key?: string; id?: string | null }) => s.key ?? s.id)).to.include('audit.prune');
      const station = await createStation(server.url);
      const day = 24 * 3600_000;
      const entry = (ageDays: number) => ({
        id: randomUUID(),
        created_at: new Date(Date.now() - ageDays * day),
        key_id: 'root',
        key_label: 'root',
        method: 'POST',
        path: '/admin/v1/x',
        station_id: station.id,
        action: `test.age-${ageDays}`,
        status: 200,
        request_id: 'r',
        client_ip: '127.0.0.1',
      });
      await server.svc.db('audit_log').insert([entry(401), entry(399)]);
      const job = await server.svc.jobs.enqueue('audit.prune', {});
      await eventually(
        async () => {
          const stored = await server.svc.jobs.queue('default').getJob(job.id!);
          return stored && (await stored.getState()) === 'completed';
        },
        { timeoutMs: 10_000 },
      );
      const left = (await server.svc.db('audit_log').where({ station_id: station.id }).select('action')).map(
        (r: { action: string }) => r.action,
      );
      expect(left).to.include('test.age-399');
      expect(left).not.to.include('test.age-401');
    } finally {
      await workers.close();
    }
  });
});
