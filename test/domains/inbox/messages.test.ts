import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { useClockedServer } from '../../support/server.ts';
import { admin, request } from '../../support/http.ts';
import { createStation, createToken } from '../../support/factories.ts';
import { inboxFixture } from './helpers.ts';

// docs/inbox.md, "Sending": the gates (station → credential → module → part), what each kind needs, the
// text kept exactly, the 10-minute repeat, and the hourly limits per client and per address.

const T0 = new Date('2026-12-15T10:00:00.000Z');

describe('inbox: sending messages, dedications and requests', () => {
  const { clock, server } = useClockedServer(T0, { reset: true });

  it('a message is taken (202 pending) and shown to the studio exactly as sent, with the client as a pseudonym', async () => {
    const f = await inboxFixture(server.url, clock);
    const clientId = randomUUID();
    const text = '  Hi <b>studio</b> & "friends" \u{1F3B5}\nline two\u200b ';
    const res = await f.send({ clientId, kind: 'dedication', text, name: 'Mia', location: 'Leipzig' });
    expect(res.status, res.text).to.equal(202);
    expect(res.body).to.have.keys(['id', 'status']);
    expect(res.body.status).to.equal('pending');
    const [message] = await f.list();
    expect(message).to.deep.equal({
      id: res.body.id,
      kind: 'dedication',
      text,
      name: 'Mia',
      location: 'Leipzig',
      track: null,
      status: 'pending',
      client: message.client,
      receivedAt: T0.toISOString(),
      updatedAt: T0.toISOString(),
    });
    expect(message.client).to.match(/^[a-z2-7]{10}$/);
    // The same client keeps its pseudonym.
    await f.send({ clientId, kind: 'message', text: 'again' });
    const [second] = await f.list();
    expect(second.client).to.equal(message.client);
  });

  it('a request carries its track; a message may name one too', async () => {
    const f = await inboxFixture(server.url, clock);
    const res = await f.request('Daft Punk', 'Digital Love', { text: 'for Anna' });
    expect(res.status, res.text).to.equal(202);
    const [request_] = await f.list();
    expect(request_).to.deep.include({ kind: 'request', text: 'for Anna', track: { artist: 'Daft Punk', title: 'Digital Love' } });
    clock.advance(1000);
    const bare = await f.request('Daft Punk', 'Aerodynamic');
    expect(bare.status, bare.text).to.equal(202);
    expect((await f.list())[0]).to.deep.include({ text: null, name: null, location: null });
  });

  it('400: a message or dedication without text, a request without track, text over the station’s maxLength (in characters), unknown fields, a clientId that is no UUID', async () => {
    const f = await inboxFixture(server.url, clock, { inbox: { maxLength: 5 } });
    const clientId = randomUUID();
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ clientId, kind: 'message' }, 'text'],
      [{ clientId, kind: 'dedication', name: 'Mia' }, 'text'],
      [{ clientId, kind: 'request', text: 'hey' }, 'track'],
      [{ clientId, kind: 'message', text: 'sixsix' }, 'text'],
      [{ clientId, kind: 'message', text: 'hi', colour: 'red' }, 'colour'],
      [{ clientId: 'listener-42', kind: 'message', text: 'hi' }, 'clientId'],
      [{ clientId, kind: 'shout', text: 'hi' }, 'kind'],
      [{ clientId, kind: 'message', text: '' }, 'text'],
      [{ clientId, kind: 'request', track: { artist: 'A' } }, 'track.title'],
    ];
    for (const [body, path] of cases) {
      const res = await f.send(body);
      expect(res.status, `${JSON.stringify(body)} → ${res.text}`).to.equal(400);
      expect(res.body.error.code).to.equal('VALIDATION_ERROR');
      expect(
        res.body.error.issues.map((i: { path: string }) => i.path),
        JSON.stringify(body),
      ).to.include(path);
    }
    // Five characters are five code points, whatever their UTF-16 length.
    expect((await f.message('\u{1F3B5}\u{1F3B5}\u{1F3B5}\u{1F3B5}\u{1F3B5}')).status).to.equal(202);
  });

  it('gates: unknown station 404 NOT_FOUND, then the credential (another scope, another station’s: 401), then the module (404 MODULE_DISABLED), then a part switched off', async () => {
    const f = await inboxFixture(server.url, clock);
    const body = { clientId: randomUUID(), kind: 'message', text: 'hi' };
    const unknown = await request(server.url, 'POST', '/api/v1/stations/no-such-station/inbox/messages', { token: f.token, json: body });
    expect([unknown.status, unknown.body.error.code]).to.deep.equal([404, 'NOT_FOUND']);
    const { token: reader } = await createToken(server.url, f.station.id, ['listener:read']);
    expect((await f.send(body, { token: reader })).status).to.equal(401);
    const other = await inboxFixture(server.url, clock);
    expect((await f.send(body, { token: other.token })).status).to.equal(401);
    expect((await f.send(body, { token: 'wvl_nope' })).status).to.equal(401);
    const off = await createStation(server.url);
    const { token: offToken } = await createToken(server.url, off.id, ['inbox:write']);
    const closed = await request(server.url, 'POST', `/api/v1/stations/${off.slug}/inbox/messages`, { token: offToken, json: body });
    expect([closed.status, closed.body.error.code]).to.deep.equal([404, 'MODULE_DISABLED']);
    // The module gate comes before the body: a bad body at a station without the module is 404 too.
    const closedBad = await request(server.url, 'POST', `/api/v1/stations/${off.slug}/inbox/messages`, { token: offToken, json: {} });
    expect(closedBad.status).to.equal(404);

    await f.settings({ messages: false });
    for (const kind of ['message', 'dedication']) {
      const res = await f.send({ ...body, kind });
      expect([res.status, res.body.error.code], kind).to.deep.equal([404, 'MODULE_DISABLED']);
    }
    expect((await f.request('A', 'B')).status).to.equal(202);
    await f.settings({ messages: true, requests: false });
    const refused = await f.request('A', 'C');
    expect([refused.status, refused.body.error.code]).to.deep.equal([404, 'MODULE_DISABLED']);
    const search = await f.requestable('q=ab');
    expect([search.status, search.body.error.code]).to.deep.equal([404, 'MODULE_DISABLED']);
    expect((await f.message('still open')).status).to.equal(202);
  });

  it('the same kind and text from the same client within 10 minutes is the same message: 202 with the first id, stored once', async () => {
    const f = await inboxFixture(server.url, clock);
    const clientId = randomUUID();
    const first = await f.send({ clientId, kind: 'message', text: 'Hello' });
    clock.advance(9 * 60_000);
    const again = await f.send({ clientId, kind: 'message', text: 'Hello', name: 'another name' });
    expect(again.status).to.equal(202);
    expect(again.body).to.deep.equal(first.body);
    expect(await f.list()).to.have.length(1);
    // Another kind, another text, another client: other messages.
    expect((await f.send({ clientId, kind: 'dedication', text: 'Hello' })).body.id).to.not.equal(first.body.id);
    expect((await f.send({ clientId, kind: 'message', text: 'Hello!' })).body.id).to.not.equal(first.body.id);
    expect((await f.send({ clientId: randomUUID(), kind: 'message', text: 'Hello' })).body.id).to.not.equal(first.body.id);
    // Requests of other tracks are other messages.
    const a = await f.send({ clientId, kind: 'request', track: { artist: 'A', title: 'One' } });
    const b = await f.send({ clientId, kind: 'request', track: { artist: 'A', title: 'Two' } });
    expect(a.body.id).to.not.equal(b.body.id);
    clock.advance(60_001);
    const later = await f.send({ clientId, kind: 'message', text: 'Hello' });
    expect(later.body.id).to.not.equal(first.body.id);
  });

  it('at most perClientPerHour messages per client: 429 RATE_LIMITED with Retry-After until the oldest leaves the hour; a repeat does not count', async () => {
    const f = await inboxFixture(server.url, clock, { inbox: { perClientPerHour: 2 } });
    const clientId = randomUUID();
    expect((await f.send({ clientId, kind: 'message', text: 'one' })).status).to.equal(202);
    clock.advance(10 * 60_000);
    expect((await f.send({ clientId, kind: 'message', text: 'two' })).status).to.equal(202);
    expect((await f.send({ clientId, kind: 'message', text: 'two' })).status, 'a repeat').to.equal(202);
    clock.advance(60_000);
    const refused = await f.send({ clientId, kind: 'message', text: 'three' });
    expect(refused.status).to.equal(429);
    expect(refused.body.error.code).to.equal('RATE_LIMITED');
    // 'one' leaves the hour 60 − 11 = 49 minutes from now.
    expect(refused.headers.get('retry-after')).to.equal(String(49 * 60));
    expect((await f.send({ clientId: randomUUID(), kind: 'message', text: 'three' })).status, 'another client').to.equal(202);
    clock.advance(49 * 60_000);
    expect((await f.send({ clientId, kind: 'message', text: 'three' })).status).to.equal(202);
  });

  it('at most 30 messages an hour from one address (per station): the 31st is 429 whatever its client; another address still sends', async () => {
    const f = await inboxFixture(server.url, clock, { inbox: { perClientPerHour: 60 } });
    for (let i = 0; i < 30; i++) expect((await f.message(`m${i}`, {}, { address: '203.0.113.7' })).status).to.equal(202);
    const refused = await f.message('m30', {}, { address: '203.0.113.7' });
    expect(refused.status).to.equal(429);
    expect(Number(refused.headers.get('retry-after'))).to.equal(3600);
    expect((await f.message('m30', {}, { address: '203.0.113.8' })).status).to.equal(202);
    // Per station: the same address at another station is not counted here.
    const other = await inboxFixture(server.url, clock);
    expect((await other.message('elsewhere', {}, { address: '203.0.113.7' })).status).to.equal(202);
  });

  it('sends at once are decided one after the other: a retried send is stored once, a limit is never passed, a track requested once', async () => {
    const f = await inboxFixture(server.url, clock, { inbox: { perClientPerHour: 3 } });
    const clientId = randomUUID();
    const repeats = await Promise.all(Array.from({ length: 12 }, () => f.send({ clientId, kind: 'message', text: 'same' })));
    expect(new Set(repeats.map((r) => r.body.id)).size).to.equal(1);
    const other = randomUUID();
    const burst = await Promise.all(Array.from({ length: 12 }, (_, i) => f.send({ clientId: other, kind: 'message', text: `m${i}` })));
    expect(burst.filter((r) => r.status === 202)).to.have.length(3);
    expect(burst.filter((r) => r.status === 429)).to.have.length(9);
    const requests = await Promise.all(Array.from({ length: 8 }, () => f.request('Same', 'Track')));
    expect(requests.filter((r) => r.status === 202)).to.have.length(1);
    expect(requests.filter((r) => r.status === 409)).to.have.length(7);
    expect(await f.list()).to.have.length(1 + 3 + 1);
  });

  it('the studio never learns a clientId or an address, and the listener never a pseudonym: nothing of them in any stored column', async () => {
    const f = await inboxFixture(server.url, clock);
    const clientId = randomUUID();
    const address = '198.51.100.23';
    const res = await f.send({ clientId, kind: 'message', text: 'private' }, { address });
    expect(JSON.stringify(res.body)).to.not.include(clientId);
    const rows = await server.svc.db('inbox_messages').where({ station_id: f.station.id });
    const stored = JSON.stringify(rows);
    expect(stored).to.not.include(clientId);
    expect(stored).to.not.include(address);
    const listed = JSON.stringify(await admin(server.url, 'GET', `/stations/${f.station.id}/inbox/messages`));
    expect(listed).to.not.include(clientId);
    expect(listed).to.not.include(rows[0].client_hash);
  });
});
