import { randomUUID } from 'node:crypto';
import { Writable } from 'node:stream';
import type { AddressInfo } from 'node:net';
import { expect } from 'chai';
import { loadConfig } from '../../../src/config.ts';
import { createLogger } from '../../../src/lib/logger.ts';
import { ManualClock } from '../../../src/lib/clock.ts';
import { createWebServices } from '../../../src/roles/services.ts';
import { startWeb } from '../../../src/roles/web.ts';
import { startWorkers } from '../../../workers/index.ts';
import { admin, request } from '../../support/http.ts';
import { eventually } from '../../support/factories.ts';
import { startReceiver, type Receiver } from '../../support/receiver.ts';
import { useClockedServer } from '../../support/server.ts';
import { inboxFixture } from './helpers.ts';

// docs/inbox.md, "Privacy" and "Erasure": a clientId and an address are never in an answer, a log line,
// a webhook or an export; erasure (by the listener's clientId, or by the studio's pseudonym) deletes
// every message and vote of the client and takes its votes out of the plays' counts.

const T0 = new Date('2026-12-15T10:00:00.000Z');
const RANGE = `from=${encodeURIComponent('2026-12-15T09:00:00Z')}&to=${encodeURIComponent('2026-12-15T11:00:00Z')}`;

describe('inbox: privacy', () => {
  it('no clientId or address in any log line (debug included), answer, webhook or play-log export of a full round', async () => {
    const clock = new ManualClock(T0);
    const config = loadConfig({ ...process.env, PORT: '0', LOG_LEVEL: 'debug' });
    const raw: string[] = [];
    const sink = new Writable({
      write(chunk, _encoding, done) {
        raw.push(String(chunk));
        done();
      },
    });
    const logger = createLogger(config, 'test', sink);
    const svc = await createWebServices(config, logger, { clock });
    const web = await startWeb(svc, 0, logger);
    const workers = await startWorkers(svc);
    const url = `http://127.0.0.1:${(web.server.address() as AddressInfo).port}`;
    let receiver: Receiver | null = null;
    try {
      receiver = await startReceiver();
      const f = await inboxFixture(url, clock, { inbox: { perClientPerHour: 2, trackRepeatMinutes: 60 } });
      expect(
        (await admin(url, 'POST', `/stations/${f.station.id}/webhooks`, { url: receiver.url, events: ['inbox.message'] })).status,
      ).to.equal(201);
      const clientId = randomUUID();
      const address = '198.51.100.77';
      const answers: string[] = [];
      const keep = (res: { text: string }) => (answers.push(res.text), res);
      keep(await f.send({ clientId, kind: 'message', text: 'hello' }, { address }));
      keep(await f.send({ clientId, kind: 'message', text: 'hello' }, { address }));
      await f.play('A', 'One');
      keep(await f.send({ clientId, kind: 'request', track: { artist: 'A', title: 'One' } }, { address }));
      keep(await f.send({ clientId, kind: 'request', track: { artist: 'B', title: 'Two' } }, { address }));
      keep(await f.send({ clientId, kind: 'message', text: 'over the limit' }, { address }));
      keep(await f.send({ clientId: `${clientId}x`, kind: 'message', text: 'bad id' }, { address }));
      keep(await f.like(clientId, 1));
      keep(await request(url, 'GET', `/admin/v1/stations/${f.station.id}/inbox/messages`, { token: process.env.WAVELINE_ADMIN_TOKEN }));
      keep(
        await request(url, 'GET', `/admin/v1/stations/${f.station.id}/plays?${RANGE}&format=csv`, {
          token: process.env.WAVELINE_ADMIN_TOKEN,
        }),
      );
      keep(await request(url, 'GET', `/admin/v1/stations/${f.station.id}/plays?${RANGE}`, { token: process.env.WAVELINE_ADMIN_TOKEN }));
      const event = await eventually(() => receiver!.ofType('inbox.message')[0], { timeoutMs: 10_000 });
      expect(event.json.data).to.deep.include({ kind: 'message', text: 'hello', status: 'pending' });
      keep(await request(url, 'DELETE', `/api/v1/stations/${f.station.slug}/inbox/clients/${clientId}`, { token: f.token }));
      const everything = [...answers, ...raw, ...receiver.received.map((r) => r.body + JSON.stringify(r.headers))].join('\n');
      expect(everything).to.not.include(clientId);
      expect(everything).to.not.include(address);
      expect(raw.join('')).to.include('inbox'); // the log was written (route templates name the inbox)
    } finally {
      await receiver?.close();
      await workers.close();
      await web.close(500);
      await svc.close();
    }
  });
});

describe('inbox: erasure', () => {
  const { clock, server } = useClockedServer(T0, { reset: true });

  async function scene() {
    const f = await inboxFixture(server.url, clock);
    const [gone, kept] = [randomUUID(), randomUUID()];
    await f.send({ clientId: gone, kind: 'message', text: 'erase me' });
    await f.send({ clientId: kept, kind: 'message', text: 'keep me' });
    await f.play('A', 'One');
    await f.like(gone, 1);
    await f.like(kept, -1);
    clock.advance(60_000);
    await f.play('A', 'Two');
    await f.like(gone, -1);
    const plays = async () =>
      (await admin(server.url, 'GET', `/stations/${f.station.id}/plays?${RANGE}`)).body.plays.map((p: Record<string, unknown>) => [
        p.title,
        p.likes,
        p.dislikes,
      ]);
    expect(await plays()).to.deep.equal([
      ['One', 1, 1],
      ['Two', 0, 1],
    ]);
    return { f, gone, kept, plays };
  }

  it('the listener erases itself by its clientId: every message and vote go, the plays’ counts drop its votes; 204 also when nothing is left', async () => {
    const { f, gone, plays } = await scene();
    const path = `/api/v1/stations/${f.station.slug}/inbox/clients/${gone}`;
    const res = await request(server.url, 'DELETE', path, { token: f.token });
    expect(res.status, res.text).to.equal(204);
    expect((await f.list()).map((m: { text: string }) => m.text)).to.deep.equal(['keep me']);
    expect(await plays()).to.deep.equal([
      ['One', 0, 1],
      ['Two', 0, 0],
    ]);
    expect((await request(server.url, 'DELETE', path, { token: f.token })).status).to.equal(204);
    expect(
      (await request(server.url, 'DELETE', `/api/v1/stations/${f.station.slug}/inbox/clients/not-a-uuid`, { token: f.token })).status,
    ).to.equal(400);
    // Voting again after the erasure starts from nothing.
    expect((await f.like(gone, 1)).body).to.deep.include({ likes: 1, dislikes: 0 });
  });

  it('the studio erases by pseudonym (audited); another station’s data of the same clientId is another pseudonym and stays', async () => {
    const { f, gone, plays } = await scene();
    const other = await inboxFixture(server.url, clock);
    await other.send({ clientId: gone, kind: 'message', text: 'elsewhere' });
    const pseudonym = (await f.list()).find((m: { text: string }) => m.text === 'erase me').client;
    const elsewhere = (await other.list())[0].client;
    expect(elsewhere).to.not.equal(pseudonym);
    const res = await admin(server.url, 'DELETE', `/stations/${f.station.id}/inbox/clients/${pseudonym}`);
    expect(res.status, res.text).to.equal(204);
    expect((await f.list()).map((m: { text: string }) => m.text)).to.deep.equal(['keep me']);
    expect(await plays()).to.deep.equal([
      ['One', 0, 1],
      ['Two', 0, 0],
    ]);
    expect((await other.list()).map((m: { text: string }) => m.text)).to.deep.equal(['elsewhere']);
    expect((await admin(server.url, 'DELETE', `/stations/${f.station.id}/inbox/clients/NOT-BASE32`)).status).to.equal(400);
    const entries: Array<{ target: string; status: number }> = await server.svc
      .db('audit_log')
      .where({ station_id: f.station.id, action: 'inbox.erase' });
    expect(entries.map((e) => [e.target, e.status])).to.have.deep.members([
      [pseudonym, 204],
      ['NOT-BASE32', 400],
    ]);
  });
});
