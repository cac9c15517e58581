import { readFileSync, statSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { expect } from 'chai';
import { ConfigError, loadConfig, type Config } from '../../../src/config.ts';
import { ManualClock } from '../../../src/lib/clock.ts';
import { createLogger } from '../../../src/lib/logger.ts';
import { validate } from '../../../src/http/validate.ts';
import { createWebServices } from '../../../src/roles/services.ts';
import type { WebServices } from '../../../src/services.ts';
import { startWeb } from '../../../src/roles/web.ts';
import { migrate } from '../../../src/roles/migrate.ts';
import { PROFILE_KEYS } from '../../../src/domains/stations/model.ts';
import { DEMO_BUNDLE, demoCredentialsBlock, loadDemoIfEmpty } from '../../../src/domains/admin/demo.ts';
import { checkBundle } from '../../../src/domains/admin/bundle.ts';
import { Bundle, type ImportResult } from '../../../src/domains/admin/schemas.ts';
import { request, type Reply } from '../../support/http.ts';
import { freshDatabase } from '../../support/database.ts';
import { get as spiGet, kid, kids, parseXml } from '../radiodns/helpers.ts';
import { parseFeed } from 'podcast-partytime';

// The demo bundle in the repository, and `waveline dev` loading it: on a database of its own, because
// "load the demo when there is no station yet" needs a database with no station.

const IMPORT_DAY = '2026-03-10T08:15:00Z'; // a Tuesday; Berlin is UTC+1

describe('the demo bundle (demo/bundle.json)', () => {
  it('is small (< 300 KB), valid against the bundle schema, and free of bundle-level issues', () => {
    expect(statSync(DEMO_BUNDLE).size).to.be.below(300 * 1024);
    const bundle = validate<Bundle>(Bundle, 'body', JSON.parse(readFileSync(DEMO_BUNDLE, 'utf8')));
    expect(checkBundle(bundle)).to.deep.equal([]);
    expect(bundle.station).to.include({ slug: 'demo', name: 'Waveline Demo FM', timezone: 'Europe/Berlin' });
  });
});

describe('waveline dev: the demo station in an empty database', function () {
  this.timeout(60_000);
  const clock = new ManualClock(IMPORT_DAY);
  let config: Readonly<Config>;
  let svc: WebServices;
  let web: Awaited<ReturnType<typeof startWeb>>;
  let url: string;
  let result: ImportResult;
  let token: string;
  const get = (path: string): Promise<Reply> => request(url, 'GET', `/api/v1/stations/demo${path}`, { token });
  const at = async (iso: string, path: string) => {
    clock.set(iso);
    try {
      return await get(path);
    } finally {
      clock.set(IMPORT_DAY);
    }
  };

  let database: Awaited<ReturnType<typeof freshDatabase>>;
  before(async () => {
    database = await freshDatabase('demo');
    config = loadConfig({ ...process.env, DATABASE_URL: database.url });
    await migrate(config);
    svc = await createWebServices(config, createLogger(config, 'test'), { clock });
    web = await startWeb(svc, 0, createLogger(config, 'test'));
    url = `http://127.0.0.1:${(web.server.address() as AddressInfo).port}`;
  });
  after(async () => {
    await web?.close();
    await svc?.close();
    await database?.close();
  });

  it('loads the demo bundle when there is no station', async () => {
    const loaded = await loadDemoIfEmpty(svc);
    expect(loaded).to.not.equal(null);
    result = loaded as ImportResult;
    expect(result.station).to.include({ slug: 'demo', name: 'Waveline Demo FM', timezone: 'Europe/Berlin' });
    expect(result.credentials.map((c) => c.scopes).sort()).to.deep.equal([['ingest:write'], ['listener:read'], ['push:register']]);
    token = result.credentials.find((c) => c.scopes.includes('listener:read'))!.token;
  });

  it('leaves a database with a station alone (a second start loads nothing)', async () => {
    expect(await loadDemoIfEmpty(svc)).to.equal(null);
    expect(await svc.db('stations').count<Array<{ count: number }>>('* as count')).to.deep.equal([{ count: 1 }]);
  });

  it('lists each fresh token with its scope in a "demo credentials" block', () => {
    const block = demoCredentialsBlock(result, 'http://localhost:3000');
    expect(block).to.match(/^demo credentials/);
    const lines = block.split('\n');
    for (const c of result.credentials)
      expect(
        lines.filter((l) => l.endsWith(c.token) && l.includes(c.scopes[0])),
        c.scopes[0],
      ).to.have.length(1);
    expect(block).to.include('http://localhost:3000/api/v1/stations/demo');
    // How to make a key with only the scopes a task needs (docs/operations.md#operator-keys-and-the-audit-log).
    expect(block).to.include(
      `waveline keys create --label "Demo editor" --stations ${result.station.id} --scopes content:write,schedule:write`,
    );
    expect(block).to.include(`--stations ${result.station.id} --scopes credentials:write`);
    expect(block).not.to.match(/WAVELINE_ADMIN_TOKEN/);
  });

  it('serves the station document with a full profile', async () => {
    const doc = await get('');
    expect(doc.status).to.equal(200);
    for (const key of PROFILE_KEYS) expect(doc.body.profile[key], key).to.not.equal(null);
    // Two streams heard at different delays (docs/demo.md#the-demo): mp3 (Icecast) 6 s, hls 30 s.
    expect(doc.body.profile.streamUrls.map((s: { key: string; latencySeconds: number }) => [s.key, s.latencySeconds])).to.deep.equal([
      ['mp3', 6],
      ['hls', 30],
    ]);
    const heard = await get('/now-playing?stream=hls');
    expect(heard.status).to.equal(200);
    expect(heard.body.stream).to.deep.equal({ key: 'hls', latencySeconds: 30 });
  });

  it('delivers the news and episode types with six published records, one with an image whose bytes are served', async () => {
    const schemas = await get('/schemas');
    expect(schemas.body.types.map((t: { key: string }) => t.key)).to.deep.equal(['episode', 'news']);
    const news = (await get('/content?type=news')).body.records;
    expect(news[0].values.title, 'the newest news').to.equal('Waveline Demo FM is on air');
    const episodes = (await get('/content?type=episode')).body.records;
    expect(news.length + episodes.length).to.equal(6);
    const withImage = [...news, ...episodes].filter((r: { media: unknown[] }) => r.media.length > 0);
    expect(withImage.length).to.be.greaterThan(0);
    const media = withImage[0].media[0];
    const bytes = await fetch(`${url}${media.url}`);
    expect(bytes.status).to.equal(200);
    expect(bytes.headers.get('content-type')).to.equal(media.mime);
  });

  it('serves a valid RadioDNS SI.xml for the host name localhost at once, with its logo, and the PI.xml of the load day', async () => {
    const si = await spiGet(url, '/radiodns/spi/3.1/SI.xml', 'localhost:3000');
    expect(si.status).to.equal(200);
    expect(si.headers['content-type']).to.equal('application/xml; charset=utf-8');
    const service = kid(kid(parseXml(si.text), 'services'), 'service');
    expect(kid(service, 'radiodns').attrs).to.deep.equal({ fqdn: 'localhost', serviceIdentifier: 'demo' });
    const logos = kids(service, 'mediaDescription').flatMap((md) => kids(md, 'multimedia'));
    expect(logos).to.have.length(5);
    for (const logo of logos) expect((await spiGet(url, new URL(logo.attrs.url).pathname)).status, logo.attrs.url).to.equal(200);
    const pi = await spiGet(url, '/radiodns/spi/3.1/id/localhost/demo/20260310_PI.xml');
    expect(pi.status).to.equal(200);
    expect(kids(kid(parseXml(pi.text), 'schedule'), 'programme').length).to.be.greaterThan(2);
  });

  it('serves a podcast feed at once: two episodes with real audio whose enclosures serve exactly their length', async () => {
    const res = await fetch(`${url}/podcasts/demo/feed.xml`);
    expect(res.status).to.equal(200);
    const feed = parseFeed(await res.text())!;
    expect(feed.title).to.equal('Waveline Demo FM');
    expect(feed.items).to.have.length(2);
    const cover = await fetch(feed.itunesImage!.replace(/^https?:\/\/[^/]+/, url));
    expect(cover.status).to.equal(200);
    for (const item of feed.items) {
      expect(item.duration).to.be.greaterThan(0);
      const audio = await fetch(item.enclosure.url.replace(/^https?:\/\/[^/]+/, url));
      expect(audio.status).to.equal(200);
      expect((await audio.arrayBuffer()).byteLength).to.equal(item.enclosure.length);
    }
  });

  it('lists three programs with weekly slots and every show each day of the default window', async () => {
    const programs = (await get('/programs')).body.programs;
    expect(programs.map((p: { title: string }) => p.title)).to.deep.equal(['Afternoon Mix', 'Morning Drive', 'Night Shift']);
    for (const p of programs) expect(p.slots).to.have.length(7);
    const schedule = (await get('/schedule')).body;
    expect(schedule.broadcasts.length).to.be.greaterThan(0);
    const days = new Map<string, string[]>();
    for (const b of schedule.broadcasts) days.set(b.localDate, [...(days.get(b.localDate) ?? []), b.program.title]);
    expect([...days.keys()].slice(1)).to.deep.equal([
      '2026-03-10',
      '2026-03-11',
      '2026-03-12',
      '2026-03-13',
      '2026-03-14',
      '2026-03-15',
      '2026-03-16',
    ]);
    for (const date of [...days.keys()].slice(1))
      expect(days.get(date), date).to.deep.equal(['Morning Drive', 'Afternoon Mix', 'Night Shift']);
  });

  it('always has a current broadcast, from the import day’s first minute to the last day', async () => {
    const instants = [
      '2026-03-09T23:00:00Z',
      '2026-03-10T04:59:59Z',
      '2026-03-10T05:00:00Z',
      '2026-03-10T13:30:00Z',
      '2026-03-10T19:00:00Z',
      '2026-03-10T22:59:59Z',
      '2026-03-14T02:00:00Z',
      '2026-03-17T22:30:00Z',
    ];
    for (const iso of instants) {
      const current = await at(iso, '/broadcast/current');
      expect(current.body.broadcast, iso).to.be.an('object');
    }
  });

  it('follows a rundown through the import day: the on-air row has a planned position', async () => {
    const row = await svc.db('feed_rows').where({ station_id: result.station.id, kind: 'on-air', entry: 'current' }).first();
    expect(row.data.broadcast.title).to.equal('Morning Drive');
    expect(row.data.position).to.be.an('object');
    expect(result.rundowns).to.have.length(4);
  });
});

describe('WAVELINE_DEMO', () => {
  it('defaults to loading the demo; 0 skips it; other values are a configuration error', () => {
    expect(loadConfig({}).demo).to.equal(true);
    expect(loadConfig({ WAVELINE_DEMO: '0' }).demo).to.equal(false);
    expect(loadConfig({ WAVELINE_DEMO: '1' }).demo).to.equal(true);
    expect(() => loadConfig({ WAVELINE_DEMO: 'yes' })).to.throw(ConfigError, /WAVELINE_DEMO/);
  });
});
