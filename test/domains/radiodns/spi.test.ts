import { execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { admin } from '../../support/http.ts';
import { shortIdOf } from '../../../src/domains/radiodns/model.ts';
import { sharedServer, type TestServer } from '../../support/server.ts';
import { putBroadcast, putProgram, scheduleFixture, type ScheduleFixture } from '../schedule/helpers.ts';
import {
  CRID,
  DURATION,
  MIME,
  SPI_NS,
  TIME_POINT,
  enabledSetting,
  everyElement,
  expectOrder,
  get,
  kid,
  kids,
  parseXml,
  patchRadioDns,
  uploadLogo,
  type El,
} from './helpers.ts';

// docs/radiodns.md#what-the-documents-hold-and-the-choices-made: SI.xml by host name,
// PI.xml per local date by service id and by bearer, checked against the rules of ETSI TS 102 818
// V3.4.1 (spi_34.xsd): names and order of elements, required attributes, text limits, CRIDs, shortId
// range, time and duration forms.
//
// With WAVELINE_SPI_VALIDATOR naming a script that takes an XML file and exits non-zero when it does
// not validate against spi_34.xsd (kept outside the repository: the schema carries no licence), every
// document fetched here is validated too.

const VALIDATOR = process.env.WAVELINE_SPI_VALIDATOR;
let scratch: string | undefined;
function validated(xml: string): void {
  if (!VALIDATOR) return;
  scratch ??= mkdtempSync(join(tmpdir(), 'spi-'));
  const file = join(scratch, `doc-${Date.now()}-${Math.random().toString(36).slice(2)}.xml`);
  writeFileSync(file, xml);
  try {
    execFileSync(process.execPath, [VALIDATOR, file], { stdio: 'pipe' });
  } catch (err) {
    throw new Error(`does not validate against spi_34.xsd: ${(err as { stdout?: Buffer }).stdout?.toString()}\n${xml}`);
  }
}

const SERVICE_ORDER = [
  'shortName',
  'mediumName',
  'longName',
  'alias',
  'phoneme',
  'mediaDescription',
  'genre',
  'keywords',
  'link',
  'bearer',
  'radiodns',
  'geolocation',
] as const;
const PROGRAMME_ORDER = [
  'shortName',
  'mediumName',
  'longName',
  'alias',
  'phoneme',
  'location',
  'onDemand',
  'mediaDescription',
  'genre',
  'keywords',
  'memberOf',
  'link',
] as const;

const uniqueHost = (prefix: string) => `${prefix}-${Date.now().toString(36)}${Math.random().toString(36).slice(2, 6)}.radio.example`;

function expectSpiHeaders(res: { status: number; headers: Record<string, string | string[] | undefined> }): void {
  expect(res.status).to.equal(200);
  expect(res.headers['content-type']).to.equal('application/xml; charset=utf-8');
  expect(res.headers['cache-control']).to.equal('public, max-age=300');
  expect(res.headers.etag).to.match(/^"[0-9a-f]{64}"$/);
}

/** Every element in the SPI namespace; every time point and duration in the standard's forms. */
function expectWellFormedSpi(root: El): void {
  everyElement(root, (el) => {
    expect(el.ns, el.name).to.equal(SPI_NS);
    for (const [name, value] of Object.entries(el.attrs)) {
      if (['creationTime', 'startTime', 'stopTime', 'time'].includes(name)) expect(value, `${el.name}@${name}`).to.match(TIME_POINT);
      if (name === 'duration') expect(value).to.match(DURATION);
      if (name === 'mimeValue') expect(value).to.match(MIME);
    }
  });
}

describe('RadioDNS shortId', () => {
  it('is stable, in 0–16777215, and differs between ids that share their last digits (hand-made UUIDs, a program and its broadcast)', () => {
    const ids = Array.from({ length: 200 }, (_, i) => `00000000-0000-4000-8000-${i.toString(16).padStart(12, '0')}`);
    const alike = ['11111111-1111-4111-8111-000000000003', '22222222-2222-4222-8222-000000000003'];
    const shortIds = [...ids, ...alike].map(shortIdOf);
    for (const id of shortIds) expect(Number.isInteger(id) && id >= 0 && id <= 16777215, String(id)).to.equal(true);
    expect(new Set(shortIds).size).to.equal(shortIds.length);
    expect(shortIdOf(alike[0]!)).to.equal(shortIdOf(alike[0]!.toUpperCase()));
  });
});

describe('RadioDNS SPI documents', () => {
  let server: TestServer;
  before(async () => {
    server = await sharedServer();
  });

  async function spiStation(
    fqdn: string,
    overrides: Record<string, unknown> = {},
  ): Promise<ScheduleFixture & { logo: string; bearers: Array<{ id: string; cost: string }> }> {
    const fx = await scheduleFixture(server.url, {
      name: 'Waveline Test Radio',
      profile: {
        tagline: 'Tunes & talk <all day>',
        description: 'A station for tests.',
        websiteUrls: ['https://radio.example/'],
        streamUrls: [{ label: 'MP3', url: 'https://stream.radio.example/live.mp3', mime: 'audio/mpeg', bitrateKbps: 128 }],
      },
      ...overrides,
    });
    const logo = await uploadLogo(server.url, fx.station.id);
    const setting = enabledSetting(fqdn, {
      logoVersionId: logo,
      genres: [{ href: 'urn:tva:metadata:cs:ContentCS:2004:3.6.8', name: 'Pop' }],
    });
    const res = await patchRadioDns(server.url, fx.station.id, setting);
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    // As the documents write them (attributes are strings).
    const bearers = setting.bearers.map((b) => ({ id: b.id, cost: String(b.cost) }));
    return { ...fx, logo, bearers };
  }

  it('SI.xml: one service for the Host header’s name (port ignored), in the standard’s element order, with logos, bearers and radiodns', async () => {
    const host = uniqueHost('si');
    const fx = await spiStation(host);
    const res = await get(server.url, '/radiodns/spi/3.1/SI.xml', { host: `${host}:8080` });
    expectSpiHeaders(res);
    validated(res.text);
    const root = parseXml(res.text);
    expect(root.name).to.equal('serviceInformation');
    expectWellFormedSpi(root);
    expect(root.attrs).to.include({ originator: 'Waveline', 'xml:lang': 'en' });
    expect(root.attrs.creationTime).to.match(TIME_POINT);
    const service = kid(kid(root, 'services'), 'service');
    expectOrder(service, SERVICE_ORDER);
    expect(kid(service, 'shortName').text).to.equal('Wave');
    expect(kid(service, 'mediumName').text).to.equal('Waveline FM');
    expect(kid(service, 'longName').text).to.equal('Waveline Test Radio');
    const [texts, ...logos] = kids(service, 'mediaDescription');
    expect(kid(texts, 'shortDescription').text).to.equal('Tunes & talk <all day>');
    expect(kid(texts, 'longDescription').text).to.equal('A station for tests.');
    expect(logos.map((md) => kid(md, 'multimedia').attrs)).to.deep.equal(
      [
        ['32', '32', 'logo_colour_square'],
        ['112', '32', 'logo_colour_rectangle'],
        ['128', '128', 'logo_unrestricted'],
        ['320', '240', 'logo_unrestricted'],
        ['600', '600', 'logo_unrestricted'],
      ].map(([width, height, type]) => ({
        url: `${server.svc.config.publicBaseUrl}/radiodns/logos/${fx.station.id}/${fx.logo}/${width}x${height}.png`,
        mimeValue: 'image/png',
        width,
        height,
        type,
      })),
    );
    expect(kid(service, 'genre').attrs).to.deep.equal({ href: 'urn:tva:metadata:cs:ContentCS:2004:3.6.8' });
    expect(kid(service, 'genre').text).to.equal('Pop');
    expect(kid(service, 'link').attrs).to.include({ uri: 'https://radio.example/' });
    expect(kids(service, 'bearer').map((b) => b.attrs)).to.deep.equal([
      ...fx.bearers,
      { id: 'https://stream.radio.example/live.mp3', cost: '100', mimeValue: 'audio/mpeg', bitrate: '128' },
    ]);
    expect(kid(service, 'radiodns').attrs).to.deep.equal({ fqdn: host, serviceIdentifier: 'wave1' });
    // Every logo it lists is served.
    for (const md of logos) {
      const path = new URL(kid(md, 'multimedia').attrs.url).pathname;
      expect((await get(server.url, path)).status, path).to.equal(200);
    }
  });

  it('SI.xml is anonymous, answers 304 to its ETag, and 404 for a host with no enabled, active, public-online service', async () => {
    const host = uniqueHost('etag');
    const fx = await spiStation(host);
    const first = await get(server.url, '/radiodns/spi/3.1/SI.xml', { host });
    expectSpiHeaders(first);
    const again = await get(server.url, '/radiodns/spi/3.1/SI.xml', { host, 'if-none-match': first.headers.etag as string });
    expect(again.status).to.equal(304);
    expect(again.headers['cache-control']).to.equal('public, max-age=300');
    expect((await get(server.url, '/radiodns/spi/3.1/SI.xml', { host: uniqueHost('none') })).status).to.equal(404);
    await admin(server.url, 'PATCH', `/stations/${fx.station.id}`, { publicOnline: false });
    expect((await get(server.url, '/radiodns/spi/3.1/SI.xml', { host })).status).to.equal(404);
    await admin(server.url, 'PATCH', `/stations/${fx.station.id}`, { publicOnline: true });
    expect((await get(server.url, '/radiodns/spi/3.1/SI.xml', { host })).status).to.equal(200);
    await admin(server.url, 'PATCH', `/stations/${fx.station.id}`, { active: false });
    expect((await get(server.url, '/radiodns/spi/3.1/SI.xml', { host })).status).to.equal(404);
    expect((await get(server.url, `/radiodns/logos/${fx.station.id}/${fx.logo}/32x32.png`)).status).to.equal(404);
    await admin(server.url, 'PATCH', `/stations/${fx.station.id}`, { active: true });
    expect((await get(server.url, '/radiodns/spi/3.1/SI.xml', { host })).status).to.equal(200);
    await patchRadioDns(server.url, fx.station.id, { enabled: false });
    expect((await get(server.url, '/radiodns/spi/3.1/SI.xml', { host })).status).to.equal(404);
  });

  it('SI.xml lists the new logo as soon as the setting names another one', async () => {
    const host = uniqueHost('logo');
    const fx = await spiStation(host);
    const logoUrls = async () => {
      const res = await get(server.url, '/radiodns/spi/3.1/SI.xml', { host });
      const service = kid(kid(parseXml(res.text), 'services'), 'service');
      return kids(service, 'mediaDescription').flatMap((md) => kids(md, 'multimedia').map((m) => m.attrs.url));
    };
    expect((await logoUrls()).every((url) => url.includes(fx.logo))).to.equal(true);
    const next = await uploadLogo(server.url, fx.station.id, 900, 900);
    expect((await patchRadioDns(server.url, fx.station.id, { logoVersionId: next })).status).to.equal(200);
    const urls = await logoUrls();
    expect(urls).to.have.length(5);
    expect(urls.every((url) => url.includes(next))).to.equal(true);
    expect((await get(server.url, new URL(urls[4]).pathname)).status).to.equal(200);
  });

  it('SI.xml is served from cached bytes and changes (new ETag) as soon as the station changes', async () => {
    const host = uniqueHost('cache');
    const fx = await spiStation(host);
    const first = await get(server.url, '/radiodns/spi/3.1/SI.xml', { host });
    // The same bytes again without asking the database: change the row behind the service's back.
    await server.svc.db('stations').where({ id: fx.station.id }).update({ name: 'Changed behind its back' });
    const cached = await get(server.url, '/radiodns/spi/3.1/SI.xml', { host });
    expect(cached.headers.etag).to.equal(first.headers.etag);
    await admin(server.url, 'PATCH', `/stations/${fx.station.id}`, { name: 'Renamed Radio' });
    const changed = await get(server.url, '/radiodns/spi/3.1/SI.xml', { host });
    expect(changed.headers.etag).not.to.equal(first.headers.etag);
    expect(kid(kid(kid(parseXml(changed.text), 'services'), 'service'), 'longName').text).to.equal('Renamed Radio');
  });

  it('a stored document is answered with the same bytes and headers as the first computation (before Koa), HEAD too', async () => {
    const host = uniqueHost('fast');
    const fx = await spiStation(host);
    await putBroadcast(server.url, fx, '2026-07-01T04:00:00Z', '2026-07-01T07:00:00Z');
    for (const [path, headers] of [
      ['/radiodns/spi/3.1/SI.xml', { host }],
      [`/radiodns/spi/3.1/id/${host}/wave1/20260701_PI.xml`, {}],
    ] as const) {
      const first = await get(server.url, path, { ...headers });
      const second = await get(server.url, path, { ...headers });
      expect(second.text).to.equal(first.text);
      for (const name of ['etag', 'content-type', 'cache-control', 'content-length', 'access-control-allow-origin'])
        expect(second.headers[name], name).to.equal(first.headers[name]);
      expect(second.headers['x-request-id']).to.be.a('string');
      const notModified = await get(server.url, path, { ...headers, 'if-none-match': first.headers.etag as string });
      expect(notModified.status).to.equal(304);
      expect(notModified.body.length).to.equal(0);
    }
  });

  it('a stream media type is written as the standard’s mimeValue: parameters dropped, left out when it has no type/subtype form (SI.xml and PI.xml alike)', async () => {
    const host = uniqueHost('mime');
    const fx = await spiStation(host, {
      profile: {
        streamUrls: [
          { url: 'https://stream.radio.example/a.mp3', mime: 'audio/mpeg; codecs="mp3"', bitrateKbps: 128 },
          { url: 'https://stream.radio.example/b', mime: 'an mp3 stream' },
          { url: 'https://stream.radio.example/c.aac' },
        ],
      },
    });
    const res = await get(server.url, '/radiodns/spi/3.1/SI.xml', { host });
    validated(res.text);
    const service = kid(kid(parseXml(res.text), 'services'), 'service');
    const streams = kids(service, 'bearer').filter((b) => b.attrs.id.startsWith('https:'));
    expect(streams.map((b) => b.attrs)).to.deep.equal([
      { id: 'https://stream.radio.example/a.mp3', cost: '100', mimeValue: 'audio/mpeg', bitrate: '128' },
      { id: 'https://stream.radio.example/b', cost: '100' },
      { id: 'https://stream.radio.example/c.aac', cost: '100' },
    ]);
    // PI.xml's `location` lists the same bearers with the same attributes.
    await putBroadcast(server.url, fx, '2026-07-01T10:00:00Z', '2026-07-01T11:00:00Z', { title: 'Noon' });
    const pi = await get(server.url, `/radiodns/spi/3.1/id/${host}/wave1/20260701_PI.xml`);
    expect(pi.status).to.equal(200);
    validated(pi.text);
    const location = kid(kid(kid(parseXml(pi.text), 'schedule'), 'programme'), 'location');
    expect(kids(location, 'bearer').map((b) => b.attrs)).to.deep.equal(kids(service, 'bearer').map((b) => b.attrs));
  });

  it('texts over the standard’s limits are cut at a word boundary (longName 128, shortDescription 180, longDescription 1200)', async () => {
    const host = uniqueHost('cut');
    const words = (n: number) => Array.from({ length: n }, (_, i) => `word${i}`).join(' ');
    await spiStation(host, { name: words(30).slice(0, 200), profile: { tagline: words(40), description: words(300) } });
    const res = await get(server.url, '/radiodns/spi/3.1/SI.xml', { host });
    expectSpiHeaders(res);
    validated(res.text);
    const service = kid(kid(parseXml(res.text), 'services'), 'service');
    const long = kid(service, 'longName').text;
    const [texts] = kids(service, 'mediaDescription');
    for (const [value, max, source] of [
      [long, 128, words(30)],
      [kid(texts, 'shortDescription').text, 180, words(40)],
      [kid(texts, 'longDescription').text, 1200, words(300)],
    ] as const) {
      expect(value.length).to.be.at.most(max);
      expect(value.length).to.be.above(max - 10);
      // A prefix of whole words.
      expect(source.startsWith(value)).to.equal(true);
      expect(source[value.length]).to.equal(' ');
    }
  });

  it('text limits count characters as the schema does (not UTF-16 units, not bytes): multibyte names and descriptions', async () => {
    const host = uniqueHost('chars');
    // 7 characters, 9 UTF-16 units, 16 UTF-8 bytes a word; 16 words + 15 spaces = 127 characters.
    const word = 'Grö🎵ße🎶';
    const name = Array.from({ length: 25 }, () => word).join(' ');
    const fx = await spiStation(host, { name });
    const service = kid(kid(parseXml((await get(server.url, '/radiodns/spi/3.1/SI.xml', { host })).text), 'services'), 'service');
    const longName = kid(service, 'longName').text;
    expect(Array.from(longName)).to.have.length(127);
    expect(name.startsWith(`${longName} `)).to.equal(true);

    // Exactly 180 characters (269 UTF-16 units): it fits shortDescription whole, so no longDescription.
    const fits = `${'é'.repeat(90)} ${'🎵'.repeat(89)}`;
    expect(Array.from(fits)).to.have.length(180);
    // 181 characters: shortDescription is cut at the word boundary, longDescription has it whole.
    const over = `${'é'.repeat(90)} ${'🎵'.repeat(90)}`;
    const fitting = await putProgram(server.url, fx.station.id, { title: 'Fits', description: fits });
    const overlong = await putProgram(server.url, fx.station.id, { title: 'Over', description: over });
    await putBroadcast(server.url, { ...fx, programId: fitting }, '2026-07-01T04:00:00Z', '2026-07-01T05:00:00Z');
    await putBroadcast(server.url, { ...fx, programId: overlong }, '2026-07-01T05:00:00Z', '2026-07-01T06:00:00Z');
    const res = await get(server.url, `/radiodns/spi/3.1/id/${host}/wave1/20260701_PI.xml`);
    expectSpiHeaders(res);
    validated(res.text);
    const [first, second] = kids(kid(parseXml(res.text), 'schedule'), 'programme').map((p) => kid(p, 'mediaDescription'));
    expect(kid(first, 'shortDescription').text).to.equal(fits);
    expect(kids(first, 'longDescription')).to.have.length(0);
    expect(kid(second, 'shortDescription').text).to.equal('é'.repeat(90));
    expect(kid(second, 'longDescription').text).to.equal(over);
  });

  it('a text that is only whitespace is left out, never written as an empty element', async () => {
    const host = uniqueHost('blank');
    const fx = await spiStation(host, { profile: { tagline: '   ', description: 'Only the long one.' } });
    const service = kid(kid(parseXml((await get(server.url, '/radiodns/spi/3.1/SI.xml', { host })).text), 'services'), 'service');
    const [texts] = kids(service, 'mediaDescription');
    expect(texts.children.map((c) => c.name)).to.deep.equal(['longDescription']);
    const blank = await putProgram(server.url, fx.station.id, { title: 'Blank', description: ' \n\t ' });
    await putBroadcast(server.url, { ...fx, programId: blank }, '2026-07-01T04:00:00Z', '2026-07-01T05:00:00Z');
    const res = await get(server.url, `/radiodns/spi/3.1/id/${host}/wave1/20260701_PI.xml`);
    validated(res.text);
    const root = parseXml(res.text);
    everyElement(root, (el) => {
      if (['shortName', 'mediumName', 'longName', 'shortDescription', 'longDescription'].includes(el.name))
        expect(el.text, `<${el.name}>`).not.to.equal('');
    });
    expect(kids(kid(kid(root, 'schedule'), 'programme'), 'mediaDescription')).to.have.length(0);
  });

  it('PI.xml by service id: the published, non-cancelled broadcasts overlapping the local date, with CRIDs, shortIds, times and every bearer SI.xml lists (broadcast and stream)', async () => {
    const host = uniqueHost('pi');
    const fx = await spiStation(host);
    await admin(server.url, 'PUT', `/stations/${fx.station.id}/programs/${fx.programId}`, {
      title: 'Morning Show',
      description: 'Wake up with the news, the weather and the best music in town.',
      presenterIds: [],
      slots: [],
    });
    // Berlin, summer time (+02:00). 2026-07-01 local is [2026-06-30T22:00Z, 2026-07-01T22:00Z).
    const before = await putBroadcast(server.url, fx, '2026-06-30T20:00:00Z', '2026-06-30T23:00:00Z', { title: 'Overnight into July' });
    const morning = await putBroadcast(server.url, fx, '2026-07-01T04:00:00Z', '2026-07-01T07:30:00Z', {
      title: 'A very long programme title that exceeds sixteen',
    });
    await putBroadcast(server.url, fx, '2026-07-01T10:00:00Z', '2026-07-01T11:00:00Z', { cancellationReason: 'Football' });
    await putBroadcast(server.url, fx, '2026-07-01T12:00:00Z', '2026-07-01T13:00:00Z', { published: false });
    await putBroadcast(server.url, fx, '2026-07-01T22:00:00Z', '2026-07-01T23:00:00Z', { title: 'Next day' });
    const res = await get(server.url, `/radiodns/spi/3.1/id/${host}/wave1/20260701_PI.xml`);
    expectSpiHeaders(res);
    validated(res.text);
    const root = parseXml(res.text);
    expect(root.name).to.equal('epg');
    expectWellFormedSpi(root);
    const schedule = kid(root, 'schedule');
    expect(schedule.attrs).to.include({ originator: 'Waveline' });
    const scope = kid(schedule, 'scope');
    expect(scope.attrs).to.deep.equal({ startTime: '2026-07-01T00:00:00+02:00', stopTime: '2026-07-02T00:00:00+02:00' });
    expect(kids(scope, 'serviceScope').map((s) => s.attrs.id)).to.deep.equal(fx.bearers.map((b) => b.id));
    // "The service's bearers": every `bearer` SI.xml lists for the service — the FM and DAB bearers and
    // the stream URL, with the same attributes.
    const si = await get(server.url, '/radiodns/spi/3.1/SI.xml', { host });
    validated(si.text);
    const siBearers = kids(kid(kid(parseXml(si.text), 'services'), 'service'), 'bearer').map((b) => b.attrs);
    const bearers = [...fx.bearers, { id: 'https://stream.radio.example/live.mp3', cost: '100', mimeValue: 'audio/mpeg', bitrate: '128' }];
    expect(siBearers).to.deep.equal(bearers);
    expect(fx.bearers.map((b) => b.id.split(':')[0])).to.include.members(['fm', 'dab']);
    const programmes = kids(schedule, 'programme');
    expect(programmes.map((p) => p.attrs.id)).to.deep.equal([`crid://${host}/${before}`, `crid://${host}/${morning}`]);
    for (const p of programmes) {
      expectOrder(p, PROGRAMME_ORDER);
      expect(p.attrs.id).to.match(CRID);
      const shortId = Number(p.attrs.shortId);
      expect(Number.isInteger(shortId) && shortId >= 0 && shortId <= 16777215, p.attrs.shortId).to.equal(true);
      expect(kid(p, 'mediumName').text.length).to.be.at.most(16);
      expect(kid(p, 'memberOf').attrs.id).to.equal(`crid://${host}/program/${fx.programId}`);
      expect(kids(kid(p, 'location'), 'bearer').map((b) => b.attrs)).to.deep.equal(bearers);
    }
    const [first, second] = programmes;
    expect(kid(kid(first, 'location'), 'time').attrs).to.deep.equal({ time: '2026-06-30T22:00:00+02:00', duration: 'PT3H' });
    expect(kid(kid(second, 'location'), 'time').attrs).to.deep.equal({ time: '2026-07-01T06:00:00+02:00', duration: 'PT3H30M' });
    expect(kid(second, 'mediumName').text).to.equal('A very long');
    expect(kid(second, 'longName').text).to.equal('A very long programme title that exceeds sixteen');
    expect(kid(kid(second, 'mediaDescription'), 'shortDescription').text).to.equal(
      'Wake up with the news, the weather and the best music in town.',
    );
    // Stable: the same broadcast has the same shortId in every document.
    const again = await get(server.url, `/radiodns/spi/3.1/id/${host}/wave1/20260630_PI.xml`);
    const shortIds = kids(kid(parseXml(again.text), 'schedule'), 'programme').map((p) => [p.attrs.id, p.attrs.shortId]);
    expect(shortIds).to.deep.include([first.attrs.id, first.attrs.shortId]);
  });

  it('PI.xml by FM and DAB bearer paths is the same document; 304 to its ETag', async () => {
    const host = uniqueHost('bearer');
    const fx = await spiStation(host);
    // Bearers of this station only (hex parts accepted in either case, stored lower-case).
    const pi = Math.floor(Math.random() * 0xffff)
      .toString(16)
      .padStart(4, '0');
    const freq = String(Math.floor(Math.random() * 100000)).padStart(5, '0');
    const res = await patchRadioDns(server.url, fx.station.id, {
      bearers: [
        { id: `fm:DE0.${pi.toUpperCase()}.${freq}`, cost: 20 },
        { id: `dab:de0.1001.${pi}${pi}.0`, cost: 30 },
      ],
    });
    expect(res.body.radiodns.bearers[0].id).to.equal(`fm:de0.${pi}.${freq}`);
    await putBroadcast(server.url, fx, '2026-07-01T04:00:00Z', '2026-07-01T07:00:00Z');
    const byId = await get(server.url, `/radiodns/spi/3.1/id/${host}/wave1/20260701_PI.xml`);
    const byFm = await get(server.url, `/radiodns/spi/3.1/fm/de0/${pi.toUpperCase()}/${freq}/20260701_PI.xml`);
    const byDab = await get(server.url, `/radiodns/spi/3.1/dab/de0/1001/${pi}${pi}/0/20260701_PI.xml`);
    for (const res of [byId, byFm, byDab]) expectSpiHeaders(res);
    expect(byFm.text).to.equal(byId.text);
    expect(byDab.text).to.equal(byId.text);
    const notModified = await get(server.url, `/radiodns/spi/3.1/fm/de0/${pi}/${freq}/20260701_PI.xml`, {
      'if-none-match': `"other", ${byFm.headers.etag as string}`,
    });
    expect(notModified.status).to.equal(304);
    await patchRadioDns(server.url, fx.station.id, { bearers: [{ id: `fm:de0.${pi}.${freq}`, cost: 20 }] });
    expect((await get(server.url, `/radiodns/spi/3.1/dab/de0/1001/${pi}${pi}/0/20260701_PI.xml`)).status).to.equal(404);
  });

  it('PI.xml by a bearer (or service id) two stations share: the one with the date in its published schedule answers', async () => {
    const host = uniqueHost('shared');
    const older = await spiStation(host);
    const newer = await spiStation(host);
    // The same bearers and service id on both (a copied setting).
    expect(
      (await patchRadioDns(server.url, newer.station.id, { bearers: older.bearers.map((b) => ({ id: b.id, cost: 20 })) })).status,
    ).to.equal(200);
    await putBroadcast(server.url, older, '2026-07-01T04:00:00Z', '2026-07-01T07:00:00Z', { title: 'On the older station' });
    await putBroadcast(server.url, newer, '2026-07-02T04:00:00Z', '2026-07-02T07:00:00Z', { title: 'On the newer station' });
    const [, pi, frequency] = older.bearers[0].id.split('.');
    for (const [date, title] of [
      ['20260701', 'On the older station'],
      ['20260702', 'On the newer station'],
    ]) {
      for (const path of [
        `/radiodns/spi/3.1/fm/de0/${pi}/${frequency}/${date}_PI.xml`,
        `/radiodns/spi/3.1/id/${host}/wave1/${date}_PI.xml`,
      ]) {
        const res = await get(server.url, path);
        expect(res.status, path).to.equal(200);
        expect(res.text, path).to.include(`<longName>${title}</longName>`);
      }
    }
  });

  it('PI.xml: 404 for an unknown service and for a date outside the published schedule; 400 for a malformed date', async () => {
    const host = uniqueHost('nf');
    const fx = await spiStation(host);
    await putBroadcast(server.url, fx, '2026-07-01T04:00:00Z', '2026-07-01T07:00:00Z');
    await putBroadcast(server.url, fx, '2026-07-03T04:00:00Z', '2026-07-03T07:00:00Z');
    expect((await get(server.url, `/radiodns/spi/3.1/id/${host}/other/20260701_PI.xml`)).status).to.equal(404);
    expect((await get(server.url, `/radiodns/spi/3.1/id/${uniqueHost('x')}/wave1/20260701_PI.xml`)).status).to.equal(404);
    expect((await get(server.url, `/radiodns/spi/3.1/id/${host}/wave1/20260630_PI.xml`)).status).to.equal(404);
    expect((await get(server.url, `/radiodns/spi/3.1/id/${host}/wave1/20260704_PI.xml`)).status).to.equal(404);
    // Inside the published schedule, a day without programmes is an empty schedule.
    const gap = await get(server.url, `/radiodns/spi/3.1/id/${host}/wave1/20260702_PI.xml`);
    expectSpiHeaders(gap);
    validated(gap.text);
    expect(kids(kid(parseXml(gap.text), 'schedule'), 'programme')).to.have.length(0);
    expect((await get(server.url, `/radiodns/spi/3.1/id/${host}/wave1/2026-07-01_PI.xml`)).status).to.equal(400);
    expect((await get(server.url, `/radiodns/spi/3.1/id/${host}/wave1/20261399_PI.xml`)).status).to.equal(404);
  });

  it('PI.xml changes as soon as a broadcast or a program changes (cached bytes invalidated on writes)', async () => {
    const host = uniqueHost('inv');
    const fx = await spiStation(host);
    await putBroadcast(server.url, fx, '2026-07-01T04:00:00Z', '2026-07-01T07:00:00Z');
    const path = `/radiodns/spi/3.1/id/${host}/wave1/20260701_PI.xml`;
    const first = await get(server.url, path);
    const added = await putBroadcast(server.url, fx, '2026-07-01T08:00:00Z', '2026-07-01T09:00:00Z', { title: 'Added' });
    const second = await get(server.url, path);
    expect(second.headers.etag).not.to.equal(first.headers.etag);
    expect(second.text).to.include(`crid://${host}/${added}`);
    await admin(server.url, 'PUT', `/stations/${fx.station.id}/programs/${fx.programId}`, {
      title: 'Morning Show',
      description: 'A new description',
      presenterIds: [],
      slots: [],
    });
    const third = await get(server.url, path);
    expect(third.text).to.include('A new description');
    await admin(server.url, 'DELETE', `/stations/${fx.station.id}/broadcasts/${added}`);
    expect((await get(server.url, path)).text).not.to.include(added);
  });

  for (const [zone, date, spans] of [
    // Spring forward: 02:00 CET → 03:00 CEST on 2026-03-29 (a 23-hour day).
    [
      'Europe/Berlin',
      '20260329',
      {
        scope: ['2026-03-29T00:00:00+01:00', '2026-03-30T00:00:00+02:00'],
        broadcasts: [
          ['2026-03-28T23:00:00Z', '2026-03-29T01:00:00Z', '2026-03-29T00:00:00+01:00', 'PT2H'],
          ['2026-03-29T01:00:00Z', '2026-03-29T04:00:00Z', '2026-03-29T03:00:00+02:00', 'PT3H'],
          ['2026-03-29T21:00:00Z', '2026-03-29T22:00:00Z', '2026-03-29T23:00:00+02:00', 'PT1H'],
        ],
      },
    ],
    // Fall back: 02:00 BST → 01:00 GMT on 2026-10-25 (a 25-hour day; 01:xx happens twice).
    [
      'Europe/London',
      '20261025',
      {
        scope: ['2026-10-25T00:00:00+01:00', '2026-10-26T00:00:00+00:00'],
        broadcasts: [
          ['2026-10-24T23:00:00Z', '2026-10-25T00:30:00Z', '2026-10-25T00:00:00+01:00', 'PT1H30M'],
          ['2026-10-25T00:30:00Z', '2026-10-25T01:30:00Z', '2026-10-25T01:30:00+01:00', 'PT1H'],
          ['2026-10-25T01:30:00Z', '2026-10-25T03:00:00Z', '2026-10-25T01:30:00+00:00', 'PT1H30M'],
          ['2026-10-25T23:00:00Z', '2026-10-26T00:00:00Z', '2026-10-25T23:00:00+00:00', 'PT1H'],
        ],
      },
    ],
  ] as const) {
    it(`DST: PI.xml for ${date} in ${zone} has the right UTC offset on every programme and on its scope`, async () => {
      const host = uniqueHost('dst');
      const fx = await spiStation(host, { timezone: zone });
      const ids: string[] = [];
      for (const [startsAt, endsAt] of spans.broadcasts) ids.push(await putBroadcast(server.url, fx, startsAt, endsAt));
      const res = await get(server.url, `/radiodns/spi/3.1/id/${host}/wave1/${date}_PI.xml`);
      expectSpiHeaders(res);
      validated(res.text);
      const schedule = kid(parseXml(res.text), 'schedule');
      const scope = kid(schedule, 'scope');
      expect([scope.attrs.startTime, scope.attrs.stopTime]).to.deep.equal([...spans.scope]);
      const times = kids(schedule, 'programme').map((p) => {
        const t = kid(kid(p, 'location'), 'time').attrs;
        return [p.attrs.id, t.time, t.duration];
      });
      expect(times).to.deep.equal(spans.broadcasts.map(([, , local, duration], i) => [`crid://${host}/${ids[i]}`, local, duration]));
    });
  }

  it('DST at midnight: on 20260906 in America/Santiago (00:00 → 01:00) PI.xml covers 01:00 to the next midnight, not to 01:00', async () => {
    const host = uniqueHost('dstmid');
    const fx = await spiStation(host, { timezone: 'America/Santiago' });
    // 2026-09-06 local: [2026-09-06T01:00-03:00, 2026-09-07T00:00-03:00), a 23-hour day.
    const inDay = await putBroadcast(server.url, fx, '2026-09-07T02:00:00Z', '2026-09-07T03:00:00Z');
    const nextDay = await putBroadcast(server.url, fx, '2026-09-07T03:30:00Z', '2026-09-07T04:00:00Z');
    const res = await get(server.url, `/radiodns/spi/3.1/id/${host}/wave1/20260906_PI.xml`);
    expectSpiHeaders(res);
    validated(res.text);
    const schedule = kid(parseXml(res.text), 'schedule');
    expect(kid(schedule, 'scope').attrs).to.deep.equal({ startTime: '2026-09-06T01:00:00-03:00', stopTime: '2026-09-07T00:00:00-03:00' });
    expect(kids(schedule, 'programme').map((p) => p.attrs.id)).to.deep.equal([`crid://${host}/${inDay}`]);
    const next = await get(server.url, `/radiodns/spi/3.1/id/${host}/wave1/20260907_PI.xml`);
    const nextSchedule = kid(parseXml(next.text), 'schedule');
    expect(kid(nextSchedule, 'scope').attrs.startTime).to.equal('2026-09-07T00:00:00-03:00');
    expect(kids(nextSchedule, 'programme').map((p) => p.attrs.id)).to.deep.equal([`crid://${host}/${nextDay}`]);
  });
});
