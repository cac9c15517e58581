import { create } from 'xmlbuilder2';
import type { XMLBuilder } from 'xmlbuilder2/lib/interfaces.js';
import { DateTime } from 'luxon';
import type { Station } from '../stations/model.ts';
import { cutAtWord, LIMITS, LOGO_MIME, LOGO_SIZES, shortIdOf } from './model.ts';
import type { LocalDay, ProgrammeRow } from './queries.ts';

// SI.xml and PI.xml (ETSI TS 102 818 V3.4.1, namespace below), built with xmlbuilder2: element order,
// required attributes, text limits and time forms as spi_34.xsd has them. Texts over a limit are cut
// at a word boundary. `creationTime` is the last change of what the document shows, so the same data
// gives the same bytes (and ETag) in every process.

export const SPI_NS = 'http://www.worlddab.org/schemas/spi/34';
const XML_NS = 'http://www.w3.org/XML/1998/namespace';
export const ORIGINATOR = 'Waveline';
const LANG = 'en';
/** Cost of an IP stream bearer: receivers prefer the broadcast bearers (their costs are the operator's). */
export const STREAM_COST = 100;

// Characters XML 1.0 cannot carry at all.
// eslint-disable-next-line no-control-regex
const NOT_XML = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]/g;
/** A text as the documents write it: characters XML cannot carry dropped, whitespace collapsed. */
const clean = (value: string | null): string => (value ?? '').replace(NOT_XML, '').replace(/\s+/g, ' ').trim();
/** …and cut to `max` characters (code points, as the schema's maxLength counts them) at a word boundary. */
const text = (value: string | null, max: number): string => cutAtWord(clean(value), max);

/** The standard's time point: no fractional seconds, with the UTC offset of the zone at that instant. */
export const timePoint = (instant: Date | DateTime, zone: string): string =>
  (instant instanceof DateTime ? instant : DateTime.fromJSDate(instant))
    .setZone(zone)
    .toISO({ suppressMilliseconds: true, includeOffset: true })!
    .replace(/\.\d+/, '');

/** ISO 8601 duration in the standard's `PT…` form (hours, minutes, seconds; no days, no fractions). */
export function ptDuration(ms: number): string {
  const total = Math.max(0, Math.round(ms / 1000));
  const h = Math.floor(total / 3600);
  const m = Math.floor((total % 3600) / 60);
  const s = total % 60;
  const out = `${h ? `${h}H` : ''}${m ? `${m}M` : ''}${s ? `${s}S` : ''}`;
  return `PT${out || '0S'}`;
}

// The standard's mimeType: type/subtype of printable characters, no space (parameters cannot be written).
const MIME_VALUE = /^[!-.0-~]+\/[!-.0-~]+$/;

/** A stream's media type as `mimeValue`: its `type/subtype` without parameters; undefined when it has none. */
export function mimeValueOf(mime: string | null): string | undefined {
  const bare = mime?.split(';')[0].trim();
  return bare && MIME_VALUE.test(bare) ? bare : undefined;
}

const latest = (dates: Array<Date | string>): Date => new Date(Math.max(...dates.map((d) => new Date(d).getTime())));

// An optional element whose text is empty once cleaned (a whitespace-only value) is left out, never
// written empty; a required one (the service's shortName and mediumName, a programme's mediumName) is
// always written.
function names(el: XMLBuilder, shortName: string | null, mediumName: string, longName: string | null): void {
  if (shortName !== null) el.ele('shortName').txt(text(shortName, LIMITS.shortName));
  el.ele('mediumName').txt(text(mediumName, LIMITS.mediumName));
  const long = text(longName, LIMITS.longName);
  if (long) el.ele('longName').txt(long);
}

function descriptions(el: XMLBuilder, shortDescription: string | null, longDescription: string | null): void {
  const short = text(shortDescription, LIMITS.shortDescription);
  const long = text(longDescription, LIMITS.longDescription);
  if (!short && !long) return;
  const md = el.ele('mediaDescription');
  if (short) md.ele('shortDescription').txt(short);
  if (long) md.ele('longDescription').txt(long);
}

/**
 * The service's bearers, as SI.xml lists them and each PI.xml programme's `location` repeats them
 * (every `bearer` that SI.xml lists for the service:
 * docs/radiodns.md#what-the-documents-hold-and-the-choices-made): the configured broadcast bearers with their
 * costs, then one per profile stream URL (`id` the URL, `cost` STREAM_COST, `mimeValue` and `bitrate` when
 * known). Both elements are the schema's `bearerType`, so the attributes are the same.
 */
export function serviceBearers(station: Station): Array<Record<string, string>> {
  const broadcast = station.radiodns.bearers.map((bearer) => ({ id: bearer.id, cost: String(bearer.cost) }));
  const streams = (station.profile.streamUrls ?? []).map((stream) => {
    const mimeValue = mimeValueOf(stream.mime);
    return {
      id: stream.url,
      cost: String(STREAM_COST),
      ...(mimeValue ? { mimeValue } : {}),
      ...(stream.bitrateKbps ? { bitrate: String(stream.bitrateKbps) } : {}),
    };
  });
  return [...broadcast, ...streams];
}

export const logoPath = (stationId: string, versionId: string, width: number, height: number): string =>
  `/radiodns/logos/${encodeURIComponent(stationId)}/${versionId}/${width}x${height}.png`;

function service(el: XMLBuilder, station: Station, publicBaseUrl: string): void {
  const rd = station.radiodns;
  const svc = el.ele('service');
  names(svc, rd.shortName, rd.mediumName ?? station.name, station.name);
  descriptions(svc, station.profile.tagline, station.profile.description);
  if (rd.logoVersionId) {
    for (const size of LOGO_SIZES) {
      svc.ele('mediaDescription').ele('multimedia', {
        url: publicBaseUrl + logoPath(station.id, rd.logoVersionId, size.width, size.height),
        mimeValue: LOGO_MIME,
        width: String(size.width),
        height: String(size.height),
        type: size.type,
      });
    }
  }
  for (const genre of rd.genres) svc.ele('genre', { href: genre.href }).txt(text(genre.name, 200));
  for (const url of station.profile.websiteUrls ?? []) svc.ele('link', { uri: url, mimeValue: 'text/html' });
  for (const bearer of serviceBearers(station)) svc.ele('bearer', bearer);
  svc.ele('radiodns', { fqdn: rd.fqdn!, serviceIdentifier: rd.serviceIdentifier! });
}

/** SI.xml: one `service` per station (all answer to the same host name). */
export function serviceInformation(stations: Station[], publicBaseUrl: string): Buffer {
  const creationTime = latest(stations.map((s) => s.updatedAt));
  const root = create({ version: '1.0', encoding: 'UTF-8' }).ele(SPI_NS, 'serviceInformation', {
    version: '1',
    creationTime: timePoint(creationTime, 'UTC'),
    originator: ORIGINATOR,
  });
  root.att(XML_NS, 'xml:lang', LANG);
  const services = root.ele('services');
  for (const station of stations) service(services, station, publicBaseUrl);
  return Buffer.from(root.end({ prettyPrint: false }));
}

/** PI.xml of one local date: the day's programmes with their local times and the service's bearers. */
export function programmeInformation(station: Station, day: LocalDay, programmes: ProgrammeRow[]): Buffer {
  const rd = station.radiodns;
  const zone = station.timezone;
  const fqdn = rd.fqdn!;
  const creationTime = latest([station.updatedAt, ...programmes.flatMap((p) => [p.updated_at, p.program_updated_at])]);
  const bearers = serviceBearers(station);
  const root = create({ version: '1.0', encoding: 'UTF-8' }).ele(SPI_NS, 'epg');
  root.att(XML_NS, 'xml:lang', LANG);
  const schedule = root.ele('schedule', { version: '1', creationTime: timePoint(creationTime, 'UTC'), originator: ORIGINATOR });
  const scope = schedule.ele('scope', { startTime: timePoint(day.start, zone), stopTime: timePoint(day.end, zone) });
  for (const bearer of rd.bearers) scope.ele('serviceScope', { id: bearer.id });
  for (const p of programmes) {
    const startsAt = new Date(p.starts_at);
    const endsAt = new Date(p.ends_at);
    const programme = schedule.ele('programme', { shortId: String(shortIdOf(p.id)), id: `crid://${fqdn}/${p.id}` });
    names(programme, null, p.title, p.title);
    const location = programme.ele('location');
    location.ele('time', { time: timePoint(startsAt, zone), duration: ptDuration(endsAt.getTime() - startsAt.getTime()) });
    for (const bearer of bearers) location.ele('bearer', bearer);
    // The description as shortDescription; whole as longDescription too only when shortDescription had
    // to cut it (lengths in characters: a 180-character text with emoji fits, whatever its UTF-16 length).
    const description = clean(p.program_description);
    descriptions(programme, description, cutAtWord(description, LIMITS.shortDescription) === description ? null : description);
    programme.ele('memberOf', { id: `crid://${fqdn}/program/${p.program_id}`, shortId: String(shortIdOf(p.program_id)) });
  }
  return Buffer.from(root.end({ prettyPrint: false }));
}
