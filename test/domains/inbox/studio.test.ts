import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { useClockedServer } from '../../support/server.ts';
import { admin, request } from '../../support/http.ts';
import { inboxFixture, operatorKey } from './helpers.ts';

// docs/inbox.md, "The studio API": the list (filters, signed cursors), PATCH of a status, bans, erasure
// by pseudonym — each with its own operator-key scope (inbox:read for reads, inbox:write for changes,
// audited).

const T0 = new Date('2026-12-15T10:00:00.000Z');

describe('inbox: the studio API', () => {
  const { clock, server } = useClockedServer(T0, { reset: true });
  const asKey = (key: string, method: string, path: string, json?: unknown) =>
    request(server.url, method, `/admin/v1${path}`, { token: key, json });

  it('lists newest first, filtered by status and kind, a page at a time with signed cursors bound to the filters', async () => {
    const f = await inboxFixture(server.url, clock, { inbox: { perClientPerHour: 60 } });
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) {
      ids.push((await f.message(`m${i}`)).body.id);
      clock.advance(1000);
    }
    ids.push((await f.request('A', 'Song')).body.id);
    const base = `/stations/${f.station.id}/inbox/messages`;
    const first = await admin(server.url, 'GET', `${base}?limit=2&kind=message`);
    expect(first.body.messages.map((m: { text: string }) => m.text)).to.deep.equal(['m4', 'm3']);
    const second = await admin(server.url, 'GET', `${base}?limit=2&kind=message&cursor=${first.body.nextCursor}`);
    expect(second.body.messages.map((m: { text: string }) => m.text)).to.deep.equal(['m2', 'm1']);
    const last = await admin(server.url, 'GET', `${base}?limit=2&kind=message&cursor=${second.body.nextCursor}`);
    expect(last.body.messages.map((m: { text: string }) => m.text)).to.deep.equal(['m0']);
    expect(last.body.nextCursor).to.equal(null);
    expect((await admin(server.url, 'GET', `${base}?kind=request`)).body.messages.map((m: { id: string }) => m.id)).to.deep.equal([ids[5]]);
    // A cursor of another filter, another station, or tampered: 400.
    const other = await inboxFixture(server.url, clock);
    for (const path of [
      `${base}?limit=2&cursor=${first.body.nextCursor}`,
      `/stations/${other.station.id}/inbox/messages?limit=2&kind=message&cursor=${first.body.nextCursor}`,
      `${base}?limit=2&kind=message&cursor=${first.body.nextCursor}x`,
      `${base}?status=lost`,
      `${base}?limit=101`,
    ]) {
      const res = await admin(server.url, 'GET', path);
      expect(res.status, path).to.equal(400);
    }
    await admin(server.url, 'PATCH', `${base}/${ids[1]}`, { status: 'hidden' });
    expect((await admin(server.url, 'GET', `${base}?status=hidden`)).body.messages.map((m: { id: string }) => m.id)).to.deep.equal([
      ids[1],
    ]);
  });

  it('PATCH sets shown, answered or hidden and answers 200 with the message; unknown 404; other statuses 400; audited', async () => {
    const f = await inboxFixture(server.url, clock);
    const { id } = (await f.message('hello')).body;
    const path = `/stations/${f.station.id}/inbox/messages/${id}`;
    clock.advance(5000);
    const res = await admin(server.url, 'PATCH', path, { status: 'answered' });
    expect(res.status, res.text).to.equal(200);
    expect(res.body).to.deep.include({
      id,
      status: 'answered',
      text: 'hello',
      receivedAt: T0.toISOString(),
      updatedAt: clock.now().toISOString(),
    });
    for (const status of ['pending', 'held', 'deleted', ''])
      expect((await admin(server.url, 'PATCH', path, { status })).status, status).to.equal(400);
    expect(
      (await admin(server.url, 'PATCH', `/stations/${f.station.id}/inbox/messages/${randomUUID()}`, { status: 'shown' })).status,
    ).to.equal(404);
    const other = await inboxFixture(server.url, clock);
    expect((await admin(server.url, 'PATCH', `/stations/${other.station.id}/inbox/messages/${id}`, { status: 'shown' })).status).to.equal(
      404,
    );
    const entries: Array<{ action: string; target: string; status: number }> = await server.svc
      .db('audit_log')
      .where({ station_id: f.station.id })
      .andWhere('action', 'like', 'inbox.%');
    expect(entries.map((e) => [e.action, e.target, e.status])).to.deep.include(['inbox.status', id, 200]);
  });

  it('each studio route needs its own scope: inbox:read reads (list, stream, bans, tracks), inbox:write changes; a key on another station gets 404', async () => {
    const f = await inboxFixture(server.url, clock);
    const { id } = (await f.message('hello')).body;
    const reader = await operatorKey(server.url, [f.station.id], ['inbox:read']);
    const writer = await operatorKey(server.url, [f.station.id], ['inbox:write']);
    const other = await inboxFixture(server.url, clock);
    const elsewhere = await operatorKey(server.url, [other.station.id], ['inbox:read', 'inbox:write']);
    const base = `/stations/${f.station.id}/inbox`;
    expect((await asKey(reader, 'GET', `${base}/messages`)).status).to.equal(200);
    expect((await asKey(reader, 'GET', `${base}/bans`)).status).to.equal(200);
    expect((await asKey(reader, 'GET', `${base}/tracks?from=2026-12-14T00:00:00Z&to=2026-12-16T00:00:00Z`)).status).to.equal(200);
    expect((await asKey(reader, 'PATCH', `${base}/messages/${id}`, { status: 'shown' })).status).to.equal(403);
    expect((await asKey(reader, 'POST', `${base}/bans`, { messageId: id })).status).to.equal(403);
    expect((await asKey(writer, 'GET', `${base}/messages`)).status).to.equal(403);
    expect((await asKey(writer, 'GET', `${base}/stream`)).status).to.equal(403);
    expect((await asKey(writer, 'PATCH', `${base}/messages/${id}`, { status: 'shown' })).status).to.equal(200);
    expect((await asKey(elsewhere, 'GET', `${base}/messages`)).status).to.equal(404);
    const forbidden = await asKey(writer, 'GET', `${base}/messages`);
    expect(forbidden.body.error.message).to.include('inbox:read');
  });

  it('a ban hides what its client and its address send from then on, while the sender gets its usual 202 pending; it lapses after its days; lifting it ends it; all audited', async () => {
    const f = await inboxFixture(server.url, clock, { inbox: { perClientPerHour: 60 } });
    const troll = randomUUID();
    const address = '203.0.113.66';
    const { id } = (await f.send({ clientId: troll, kind: 'message', text: 'spam' }, { address })).body;
    const res = await admin(server.url, 'POST', `/stations/${f.station.id}/inbox/bans`, { messageId: id, days: 2 });
    expect(res.status, res.text).to.equal(201);
    const [message] = await f.list();
    expect(res.body).to.deep.equal({
      id: res.body.id,
      client: message.client,
      expiresAt: '2026-12-17T10:00:00.000Z',
      createdAt: T0.toISOString(),
    });
    const again = await f.send({ clientId: troll, kind: 'message', text: 'more spam' }, { address: '198.51.100.1' });
    expect(again.status).to.equal(202);
    expect(again.body.status).to.equal('pending');
    const fromAddress = await f.send({ clientId: randomUUID(), kind: 'message', text: 'a new phone' }, { address });
    expect(fromAddress.body.status).to.equal('pending');
    const stored = Object.fromEntries((await f.list()).map((m: { text: string; status: string }) => [m.text, m.status]));
    expect(stored).to.deep.equal({ spam: 'pending', 'more spam': 'hidden', 'a new phone': 'hidden' });
    const bans = await admin(server.url, 'GET', `/stations/${f.station.id}/inbox/bans`);
    expect(bans.body.bans).to.deep.equal([res.body]);
    clock.advance(2 * 86_400_000);
    expect((await f.send({ clientId: troll, kind: 'message', text: 'back' })).status).to.equal(202);
    expect((await f.list('limit=1'))[0]).to.deep.include({ text: 'back', status: 'pending' });
    expect((await admin(server.url, 'GET', `/stations/${f.station.id}/inbox/bans`)).body.bans).to.deep.equal([]);

    const forever = await admin(server.url, 'POST', `/stations/${f.station.id}/inbox/bans`, { messageId: id });
    expect(forever.body.expiresAt).to.equal(null);
    clock.advance(1000);
    await f.send({ clientId: troll, kind: 'message', text: 'hidden again' });
    expect((await f.list('limit=1'))[0].status).to.equal('hidden');
    expect((await admin(server.url, 'DELETE', `/stations/${f.station.id}/inbox/bans/${forever.body.id}`)).status).to.equal(204);
    expect((await admin(server.url, 'DELETE', `/stations/${f.station.id}/inbox/bans/${forever.body.id}`)).status).to.equal(404);
    clock.advance(1000);
    await f.send({ clientId: troll, kind: 'message', text: 'free' });
    expect((await f.list('limit=1'))[0].status).to.equal('pending');
    expect((await admin(server.url, 'POST', `/stations/${f.station.id}/inbox/bans`, { messageId: randomUUID() })).status).to.equal(404);
    for (const body of [{ messageId: id, days: 0 }, { messageId: id, days: 366 }, { messageId: 'x' }, {}])
      expect((await admin(server.url, 'POST', `/stations/${f.station.id}/inbox/bans`, body)).status, JSON.stringify(body)).to.equal(400);
    const actions: Array<{ action: string; status: number }> = await server.svc
      .db('audit_log')
      .where({ station_id: f.station.id })
      .andWhere('action', 'like', 'inbox.%')
      .orderBy('created_at');
    expect(actions.map((a) => `${a.action} ${a.status}`)).to.include.members(['inbox.ban 201', 'inbox.unban 204', 'inbox.unban 404']);
  });

  it('held: a blocked word as a whole word (case, width and spacing ignored) or, with holdLinks, a link; banned beats held', async () => {
    const f = await inboxFixture(server.url, clock, { inbox: { blockedWords: ['darn', 'bad  word'], perClientPerHour: 60 } });
    const cases: Array<[string, string]> = [
      ['what a DARN day', 'held'],
      ['ｄａｒｎ', 'held'],
      ['this is a bad word.', 'held'],
      ['darnation is fine', 'pending'],
      ['see https://example.org', 'held'],
      ['see www.example.org', 'held'],
      ['mail me at me@example.com', 'held'],
      ['radio.fm rocks', 'held'],
      ['Hi.How are you', 'pending'],
      ['e.g. a plain sentence', 'pending'],
    ];
    for (const [text, status] of cases) {
      const res = await f.message(text);
      expect(res.body.status, text).to.equal(status);
      clock.advance(1000);
    }
    expect((await f.message('hello', { name: 'darn it' })).body.status, 'in the name').to.equal('held');
    await f.settings({ holdLinks: false });
    expect((await f.message('see https://example.org again')).body.status).to.equal('pending');
  });

  it('PATCH /admin/v1/stations/{id} takes the inbox setting (merged), module inbox defaults off, and refuses out-of-range values', async () => {
    const { createStation } = await import('../../support/factories.ts');
    const station = await createStation(server.url);
    expect(station.modules).to.deep.include({ inbox: false });
    expect(station.inbox).to.deep.equal({
      requests: true,
      messages: true,
      likes: true,
      maxLength: 500,
      perClientPerHour: 5,
      trackRepeatMinutes: 180,
      artistRepeatMinutes: 60,
      holdLinks: true,
      blockedWords: [],
      retentionDays: 30,
    });
    const patch = (inbox: unknown) => admin(server.url, 'PATCH', `/stations/${station.id}`, { inbox });
    expect((await patch({ blockedWords: ['x'] })).body.inbox).to.deep.include({ blockedWords: ['x'], maxLength: 500 });
    expect((await patch({ maxLength: 20 })).body.inbox).to.deep.include({ blockedWords: ['x'], maxLength: 20 });
    for (const bad of [
      { maxLength: 0 },
      { maxLength: 1001 },
      { perClientPerHour: 61 },
      { trackRepeatMinutes: 1441 },
      { retentionDays: 0 },
      { blockedWords: Array.from({ length: 201 }, (_, i) => `w${i}`) },
      { blockedWords: ['x'.repeat(51)] },
      { blockedWords: ['   '] },
      { colour: 'red' },
    ]) {
      const res = await patch(bad);
      expect(res.status, JSON.stringify(bad)).to.equal(400);
    }
    expect((await admin(server.url, 'PATCH', `/stations/${station.id}`, { modules: { inbox: true } })).body.modules.inbox).to.equal(true);
  });
});
