import { expect } from 'chai';
import { useClockedServer } from '../../support/server.ts';
import { admin, request } from '../../support/http.ts';
import { eventually } from '../../support/factories.ts';
import { until } from '../../support/ingest.ts';
import { startReceiver, type Receiver } from '../../support/receiver.ts';
import { inboxFixture } from './helpers.ts';

// docs/inbox.md, "Webhook": `inbox.message` for each new pending message (not for a held, hidden or
// repeated one), its data the message as the studio list shows it; and the metrics of docs/operations.md.

const T0 = new Date('2026-12-15T10:00:00.000Z');

/** One sample of a Prometheus text exposition: the value of `name{labels…}`, or 0. */
function sample(text: string, name: string, labels: Record<string, string>): number {
  for (const line of text.split('\n')) {
    const match = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!match || match[1] !== name) continue;
    const found = Object.fromEntries([...(match[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map((m) => [m[1], m[2]]));
    if (Object.entries(labels).every(([k, v]) => found[k] === v)) return Number(match[3]);
  }
  return 0;
}

describe('inbox: the inbox.message webhook and the metrics', () => {
  const { clock, server } = useClockedServer(T0, { workers: true });
  let receiver: Receiver;
  before(async () => {
    receiver = await startReceiver();
  });
  after(() => receiver.close());

  it('one inbox.message event per new pending message, with the studio’s view as data; none for held, hidden or repeated ones', async () => {
    const f = await inboxFixture(server.url, clock, { inbox: { blockedWords: ['darn'] } });
    const hook = await admin(server.url, 'POST', `/stations/${f.station.id}/webhooks`, { url: receiver.url, events: ['inbox.message'] });
    expect(hook.status, hook.text).to.equal(201);
    const { randomUUID } = await import('node:crypto');
    const clientId = randomUUID();
    const pending = await f.send({ clientId, kind: 'dedication', text: 'for you', name: 'Mia' });
    await f.send({ clientId, kind: 'dedication', text: 'for you', name: 'Mia' });
    await f.message('darn');
    const troll = await f.message('spam');
    await admin(server.url, 'POST', `/stations/${f.station.id}/inbox/bans`, { messageId: troll.body.id });
    const event = await until(
      () => receiver.received.find((r) => r.json.stationId === f.station.id && r.json.data.id === pending.body.id),
      {
        timeoutMs: 10_000,
      },
    );
    const [listed] = (await f.list()).filter((m: { id: string }) => m.id === pending.body.id);
    expect(event.json.type).to.equal('inbox.message');
    expect(event.json.data).to.deep.equal(listed);
    // The spam (pending when sent) has its event; the held one none; wait for the spam's to know the queue drained.
    await eventually(() => receiver.received.find((r) => r.json.data?.id === troll.body.id), { timeoutMs: 10_000 });
    const texts = receiver.received.filter((r) => r.json.stationId === f.station.id).map((r) => r.json.data.text);
    expect(texts.sort()).to.deep.equal(['for you', 'spam']);
  });

  it('waveline_inbox_messages_total{kind,status} counts stored messages; waveline_inbox_refused_total{reason} refusals', async () => {
    const f = await inboxFixture(server.url, clock, { inbox: { perClientPerHour: 1, blockedWords: ['darn'] } });
    const metrics = async () => (await request(server.url, 'GET', '/metrics')).text;
    const before = await metrics();
    const count = (text: string, name: string, labels: Record<string, string>) => sample(text, name, labels);
    await f.message('hello');
    await f.message('darn');
    await f.play('A', 'One');
    await f.request('A', 'One');
    const { randomUUID } = await import('node:crypto');
    const clientId = randomUUID();
    await f.send({ clientId, kind: 'message', text: 'one' });
    await f.send({ clientId, kind: 'message', text: 'two' });
    const after = await metrics();
    const delta = (name: string, labels: Record<string, string>) => count(after, name, labels) - count(before, name, labels);
    expect(delta('waveline_inbox_messages_total', { kind: 'message', status: 'pending' })).to.equal(2);
    expect(delta('waveline_inbox_messages_total', { kind: 'message', status: 'held' })).to.equal(1);
    expect(delta('waveline_inbox_refused_total', { reason: 'recently-played' })).to.equal(1);
    expect(delta('waveline_inbox_refused_total', { reason: 'client-limit' })).to.equal(1);
  });
});
