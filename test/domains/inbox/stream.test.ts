import type { AddressInfo } from 'node:net';
import { expect } from 'chai';
import { loadConfig } from '../../../src/config.ts';
import { createLogger } from '../../../src/lib/logger.ts';
import { createWebServices } from '../../../src/roles/services.ts';
import { startWeb } from '../../../src/roles/web.ts';
import { useClockedServer, startTestServer, type TestServer } from '../../support/server.ts';
import { admin } from '../../support/http.ts';
import { ADMIN_TOKEN } from '../../support/env.ts';
import { eventually } from '../../support/factories.ts';
import { NEXT_POSITION_CTE } from '../../../src/domains/inbox/positions.ts';
import { inboxFixture, operatorKey } from './helpers.ts';

// docs/inbox.md, "The studio stream": Server-Sent Events of every new or changed message, whichever web
// process took the write, within 2 s; event ids are the station's positions, and Last-Event-ID resumes.

const T0 = new Date('2026-12-15T10:00:00.000Z');

interface SseEvent {
  id?: string;
  event?: string;
  data?: string;
}

interface OpenStream {
  status: number;
  headers: Headers;
  /** Every field block received (comments and `retry:` are kept as raw text in `raw`). */
  events: SseEvent[];
  raw: string;
  ended: boolean;
  /** The first event (after `skip` of them) matching, within `timeoutMs`. */
  next(match: (e: SseEvent) => boolean, timeoutMs?: number): Promise<SseEvent>;
  close(): void;
}

async function openStream(
  baseUrl: string,
  stationId: string,
  key: string,
  headers: Record<string, string> = {},
  query = '',
): Promise<OpenStream> {
  const controller = new AbortController();
  const res = await fetch(`${baseUrl}/admin/v1/stations/${stationId}/inbox/stream${query}`, {
    headers: { authorization: `Bearer ${key}`, ...headers },
    signal: controller.signal,
  });
  const stream: OpenStream = {
    status: res.status,
    headers: res.headers,
    events: [],
    raw: '',
    ended: false,
    next: (match, timeoutMs = 2000) => eventually(() => stream.events.find(match), { timeoutMs, intervalMs: 10 }) as Promise<SseEvent>,
    close: () => controller.abort(),
  };
  if (!res.body) return stream;
  const reader = res.body.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  void (async () => {
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        const text = decoder.decode(value, { stream: true });
        stream.raw += text;
        buffer += text;
        let end: number;
        while ((end = buffer.indexOf('\n\n')) >= 0) {
          const block = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          const event: SseEvent = {};
          for (const line of block.split('\n')) {
            const colon = line.indexOf(':');
            if (colon <= 0) continue;
            const field = line.slice(0, colon) as keyof SseEvent | 'retry';
            if (field === 'id' || field === 'event' || field === 'data') event[field] = line.slice(colon + 1).replace(/^ /, '');
          }
          if (event.event) stream.events.push(event);
        }
      }
    } catch {
      // aborted
    }
    stream.ended = true;
  })();
  return stream;
}

describe('inbox: the studio stream (Server-Sent Events)', () => {
  const { clock, server } = useClockedServer(T0);
  const streams: OpenStream[] = [];
  afterEach(() => {
    for (const s of streams.splice(0)) s.close();
  });
  const open = async (...args: Parameters<typeof openStream>) => {
    const s = await openStream(...args);
    streams.push(s);
    return s;
  };

  it('starts with retry and a ready event at the station’s position (nothing older); each new message, then its change, arrives within 2 s with a greater id', async () => {
    const f = await inboxFixture(server.url, clock);
    await f.message('before the stream');
    const key = await operatorKey(server.url, [f.station.id], ['inbox:read']);
    const stream = await open(server.url, f.station.id, key);
    expect(stream.status).to.equal(200);
    expect(stream.headers.get('content-type')).to.equal('text/event-stream; charset=utf-8');
    expect(stream.headers.get('cache-control')).to.equal('no-store');
    const ready = await stream.next((e) => e.event === 'ready');
    expect(stream.raw.startsWith('retry: 3000\n\n')).to.equal(true);
    expect(ready.id).to.equal('1');
    clock.advance(1000);
    const started = Date.now();
    const sent = await f.message('hello studio', { name: 'Mia' });
    const event = await stream.next((e) => e.event === 'message');
    expect(Date.now() - started).to.be.below(2000);
    const [listed] = await f.list();
    expect(JSON.parse(event.data!)).to.deep.equal(listed);
    expect(listed.id).to.equal(sent.body.id);
    expect(Number(event.id)).to.equal(2);
    expect(stream.events.filter((e) => e.event === 'message')).to.have.length(1);
    await admin(server.url, 'PATCH', `/stations/${f.station.id}/inbox/messages/${sent.body.id}`, { status: 'shown' });
    const changed = await stream.next((e) => e.event === 'message' && JSON.parse(e.data!).status === 'shown');
    expect(Number(changed.id)).to.equal(3);
    // The same status again is no change: no event.
    await admin(server.url, 'PATCH', `/stations/${f.station.id}/inbox/messages/${sent.body.id}`, { status: 'shown' });
    await f.message('a third');
    await stream.next((e) => e.event === 'message' && JSON.parse(e.data!).text === 'a third');
    expect(stream.events.filter((e) => e.event === 'message').map((e) => Number(e.id))).to.deep.equal([2, 3, 4]);
  });

  it('Last-Event-ID resumes: every message new or changed since, once each with its current state, in order, then ready; the header wins over lastEventId', async () => {
    const f = await inboxFixture(server.url, clock);
    const key = await operatorKey(server.url, [f.station.id], ['inbox:read']);
    const a = (await f.message('a')).body.id; // 1
    await f.message('b'); // 2
    await admin(server.url, 'PATCH', `/stations/${f.station.id}/inbox/messages/${a}`, { status: 'answered' }); // 3
    await f.message('c'); // 4
    await admin(server.url, 'PATCH', `/stations/${f.station.id}/inbox/messages/${a}`, { status: 'hidden' }); // 5
    const resumed = await open(server.url, f.station.id, key, { 'last-event-id': '2' });
    const ready = await resumed.next((e) => e.event === 'ready');
    const replay = resumed.events
      .filter((e) => e.event === 'message')
      .map((e) => [e.id, JSON.parse(e.data!).text, JSON.parse(e.data!).status]);
    expect(replay).to.deep.equal([
      ['4', 'c', 'pending'],
      ['5', 'a', 'hidden'],
    ]);
    expect(ready.id).to.equal('5');
    const byParameter = await open(server.url, f.station.id, key, {}, '?lastEventId=3');
    await byParameter.next((e) => e.event === 'ready');
    expect(byParameter.events.filter((e) => e.event === 'message').map((e) => e.id)).to.deep.equal(['4', '5']);
    const headerWins = await open(server.url, f.station.id, key, { 'last-event-id': '4' }, '?lastEventId=0');
    await headerWins.next((e) => e.event === 'ready');
    expect(headerWins.events.filter((e) => e.event === 'message').map((e) => e.id)).to.deep.equal(['5']);
    // An id the station never gave (or none that parses) starts from now.
    for (const id of ['99', 'abc', '-1']) {
      const fresh = await open(server.url, f.station.id, key, { 'last-event-id': id });
      const start = await fresh.next((e) => e.event === 'ready');
      expect(start.id, id).to.equal('5');
      expect(
        fresh.events.filter((e) => e.event === 'message'),
        id,
      ).to.have.length(0);
    }
  });

  it('a write taken by another web process reaches the stream within 2 s', async () => {
    const f = await inboxFixture(server.url, clock);
    const other: TestServer = await startTestServer();
    try {
      const stream = await open(server.url, f.station.id, ADMIN_TOKEN as string);
      await stream.next((e) => e.event === 'ready');
      const started = Date.now();
      const { request } = await import('../../support/http.ts');
      const res = await request(other.url, 'POST', `/api/v1/stations/${f.station.slug}/inbox/messages`, {
        token: f.token,
        json: { clientId: crypto.randomUUID(), kind: 'message', text: 'via the other process' },
      });
      expect(res.status, res.text).to.equal(202);
      const event = await stream.next((e) => e.event === 'message');
      expect(Date.now() - started).to.be.below(2000);
      expect(JSON.parse(event.data!).text).to.equal('via the other process');
      const patched = await request(other.url, 'PATCH', `/admin/v1/stations/${f.station.id}/inbox/messages/${res.body.id}`, {
        token: ADMIN_TOKEN,
        json: { status: 'answered' },
      });
      expect(patched.status).to.equal(200);
      await stream.next((e) => e.event === 'message' && JSON.parse(e.data!).status === 'answered');
    } finally {
      await other.close();
    }
  });

  it('a change whose announcement was lost still arrives (the stream checks the station’s position every second)', async () => {
    const f = await inboxFixture(server.url, clock);
    const stream = await open(server.url, f.station.id, ADMIN_TOKEN as string);
    await stream.next((e) => e.event === 'ready');
    const { id } = (await f.message('seen')).body;
    await stream.next((e) => e.event === 'message');
    // A status written without announcing it, as a process whose publish was lost would leave it.
    await server.svc.db.raw(
      `WITH ${NEXT_POSITION_CTE} UPDATE inbox_messages SET status = 'shown', seq = next_position.seq FROM next_position WHERE id = ?`,
      [f.station.id, id],
    );
    const event = await stream.next((e) => e.event === 'message' && JSON.parse(e.data!).status === 'shown', 2500);
    expect(event.id).to.equal('2');
  });

  it('a web process that stops ends its streams within a second, long before its drain gives up on them (the client resumes elsewhere)', async () => {
    const f = await inboxFixture(server.url, clock);
    const config = loadConfig({ ...process.env, PORT: '0' });
    const logger = createLogger(config, 'test');
    const svc = await createWebServices(config, logger);
    const web = await startWeb(svc, 0, logger);
    try {
      const url = `http://127.0.0.1:${(web.server.address() as AddressInfo).port}`;
      const stream = await open(url, f.station.id, ADMIN_TOKEN as string);
      await stream.next((e) => e.event === 'ready');
      const started = Date.now();
      const closing = web.close(10_000);
      await eventually(() => stream.ended, { timeoutMs: 3000 });
      expect(Date.now() - started).to.be.below(2500);
      // Its connection closes with it: the drain does not wait out its grace for an idle stream.
      await closing;
      expect(Date.now() - started).to.be.below(5000);
    } finally {
      await web.close(500);
      await svc.close();
    }
  });

  it('401 without a key, 404 for an unknown station; a closed stream is forgotten by the process', async () => {
    const f = await inboxFixture(server.url, clock);
    const refused = await fetch(`${server.url}/admin/v1/stations/${f.station.id}/inbox/stream`);
    expect(refused.status).to.equal(401);
    const unknown = await fetch(`${server.url}/admin/v1/stations/st_unknown/inbox/stream`, {
      headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
    });
    expect(unknown.status).to.equal(404);
    const { inboxStreams } = await import('../../../src/domains/inbox/streams.ts');
    const hub = inboxStreams(server.svc);
    const before = hub.size;
    const stream = await open(server.url, f.station.id, ADMIN_TOKEN as string);
    await stream.next((e) => e.event === 'ready');
    expect(hub.size).to.equal(before + 1);
    stream.close();
    await eventually(() => hub.size === before);
  });
});
