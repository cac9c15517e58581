import type { Context } from 'koa';
import { defineRoute } from '../../http/route.ts';
import { sendCacheable } from '../../http/etag.ts';
import { ErrorBody, Type } from '../../http/schema.ts';
import { NotFoundError } from '../../lib/errors.ts';
import type { Representation } from '../../lib/readCache.ts';
import type { Db } from '../../lib/db.ts';
import { readOn } from '../../lib/replicas/routing.ts';
import type { WebServices as Services } from '../../services.ts';
import type { Station } from '../stations/model.ts';
import { spiCacheOf } from './cache.ts';
import { programmeInformation, serviceInformation } from './documents.ts';
import { findLogo } from './logos.ts';
import { LOGO_MIME } from './model.ts';
import { localDay, programmesOf, servicesByBearer, servicesById, servicesByHost } from './queries.ts';

// RadioDNS SPI (docs/radiodns.md#routes-web-role-anonymous-receivers-carry-no-credential): anonymous
// documents for receivers — they carry no credential — answered from cached bytes with a strong ETag and
// `Cache-Control: public, max-age=300`.

export const SPI_CACHE_CONTROL = 'public, max-age=300';

const PI_FILE = '^[0-9]{8}_PI\\.xml$';
const HEX = (n: string) => Type.String({ pattern: `^[0-9a-fA-F]{${n}}$` });
const PiFile = Type.String({ pattern: PI_FILE, description: '`{YYYYMMDD}_PI.xml`: the local date in the station time zone' });

const xmlResponses = (what: string) => ({
  200: {
    description: what,
    contentType: 'application/xml',
    schema: Type.String({ title: 'SpiDocument', description: 'ETSI TS 102 818 XML' }),
  },
  304: { description: 'Not modified (If-None-Match matched the ETag).' },
  400: { description: 'Malformed path.', schema: ErrorBody },
  404: { description: 'No such service (or not enabled, inactive, offline), or a date outside its published schedule.', schema: ErrorBody },
  429: { description: 'Rate limited (per client IP).', schema: ErrorBody },
});

const spi = {
  method: 'get' as const,
  tags: ['radiodns'],
  surface: 'system' as const,
  rateLimit: 'anonymous' as const,
};

function sendSpi(ctx: Context, rep: Representation | null, notFound: string): void {
  if (!rep) throw new NotFoundError(notFound);
  sendCacheable(ctx, rep.bytes, rep.contentType, rep.etag, SPI_CACHE_CONTROL);
}

/** The request's host name: the Host header without its port, lower-case, without a trailing dot. */
export function hostName(host: string | undefined): string {
  const raw = (host ?? '').trim().toLowerCase();
  const name = raw.startsWith('[') ? raw.slice(0, raw.indexOf(']') + 1) : raw.replace(/:\d*$/, '');
  return name.replace(/\.$/, '');
}

/** The PI.xml of `file`'s local date for the service `find` names (null: 404), from the cache or computed. */
async function piDocument(svc: Services, key: string, find: (db: Db) => Promise<Station[]>, file: string) {
  // Read where listener reads are routed (a replica that shows every write this process heard, else the primary).
  return spiCacheOf(svc).read(key, (basis) =>
    readOn(
      svc,
      null,
      async (on) => {
        for (const station of await find(on.db)) {
          const day = localDay(file.slice(0, 8), station.timezone);
          if (!day) return null;
          const programmes = await programmesOf(on.db, station.id, day);
          if (programmes !== null) return programmeInformation(station, day, programmes);
        }
        return null;
      },
      basis,
    ),
  );
}

const PI_NOT_FOUND = 'No such service, or the date is outside its published schedule.';

// The cache keys of the documents: the handlers store under them, and `stored` (answered before Koa)
// finds the same answers by them.
const siKey = (host: string) => `SI\n${host}`;
const piByIdKey = (fqdn: string, serviceIdentifier: string, file: string) => `PI\nid\n${fqdn.toLowerCase()}\n${serviceIdentifier}\n${file}`;
const fmBearer = (p: Readonly<Record<string, string>>) => `fm:${p.gcc}.${p.pi}.${p.frequency}`.toLowerCase();
const dabBearer = (p: Readonly<Record<string, string>>) => `dab:${p.gcc}.${p.eid}.${p.sid}.${p.scids}`.toLowerCase();
const piByBearerKey = (bearer: string, file: string) => `PI\n${bearer}\n${file}`;

/** The stored document for `key`, for `RouteSpec.stored` (a stored 404 is left to the route). */
function storedSpi(svc: Pick<Services, 'invalidation'>, key: string) {
  const rep = spiCacheOf(svc).peek(key);
  return rep ? { rep, cacheControl: SPI_CACHE_CONTROL } : undefined;
}

export const radiodnsRoutes = [
  defineRoute({
    ...spi,
    path: '/radiodns/spi/3.1/SI.xml',
    operationId: 'getRadioDnsServiceInformation',
    summary: 'RadioDNS Service Information of the services whose fqdn is the request’s host name',
    description:
      'Anonymous. One `service` per station with `radiodns.enabled`, active and public-online, whose `radiodns.fqdn` equals the Host header without port. ' +
      '`Content-Type: application/xml; charset=utf-8`, `Cache-Control: public, max-age=300`, strong ETag and 304.',
    responses: xmlResponses('SI.xml (ETSI TS 102 818 V3.4.1 serviceInformation).'),
    stored: (_params, req, svc) => storedSpi(svc, siKey(hostName(req.headers.host))),
    async handler({ ctx, svc }) {
      const host = hostName(ctx.get('host'));
      const rep = await spiCacheOf(svc).read(siKey(host), (basis) =>
        readOn(
          svc,
          null,
          async (on) => {
            const stations = await servicesByHost(on.db, host);
            return stations.length ? serviceInformation(stations, svc.config.publicBaseUrl) : null;
          },
          basis,
        ),
      );
      sendSpi(ctx, rep, 'No RadioDNS service for this host name.');
    },
  }),
  defineRoute({
    ...spi,
    path: '/radiodns/spi/3.1/id/{fqdn}/{serviceIdentifier}/{file}',
    operationId: 'getRadioDnsProgrammeInformation',
    summary: 'RadioDNS Programme Information of one local date, by service identifier (`{YYYYMMDD}_PI.xml`)',
    description:
      'Anonymous. The published, non-cancelled broadcasts overlapping the local date (station time zone). Same headers as SI.xml.',
    params: Type.Object(
      {
        fqdn: Type.String({ minLength: 1, maxLength: 253 }),
        serviceIdentifier: Type.String({ pattern: '^[a-z0-9]{1,16}$' }),
        file: PiFile,
      },
      { additionalProperties: false },
    ),
    responses: xmlResponses('PI.xml (ETSI TS 102 818 V3.4.1 epg/schedule).'),
    stored: (p, _req, svc) => storedSpi(svc, piByIdKey(p.fqdn, p.serviceIdentifier, p.file)),
    async handler({ ctx, svc, params }) {
      const fqdn = params.fqdn.toLowerCase();
      const rep = await piDocument(
        svc,
        piByIdKey(fqdn, params.serviceIdentifier, params.file),
        (db) => servicesById(db, fqdn, params.serviceIdentifier),
        params.file,
      );
      sendSpi(ctx, rep, PI_NOT_FOUND);
    },
  }),
  defineRoute({
    ...spi,
    path: '/radiodns/spi/3.1/fm/{gcc}/{pi}/{frequency}/{file}',
    operationId: 'getRadioDnsProgrammeInformationByFm',
    summary: 'RadioDNS Programme Information by FM bearer (`fm:{gcc}.{pi}.{frequency}`)',
    params: Type.Object(
      {
        gcc: Type.String({ pattern: '^([0-9a-fA-F]{3}|[a-zA-Z]{2})$' }),
        pi: HEX('4'),
        frequency: Type.String({ pattern: '^[0-9]{5}$' }),
        file: PiFile,
      },
      { additionalProperties: false },
    ),
    responses: xmlResponses('PI.xml of the service with this FM bearer.'),
    stored: (p, _req, svc) => storedSpi(svc, piByBearerKey(fmBearer(p), p.file)),
    async handler({ ctx, svc, params }) {
      const bearer = fmBearer(params);
      const rep = await piDocument(svc, piByBearerKey(bearer, params.file), (db) => servicesByBearer(db, bearer), params.file);
      sendSpi(ctx, rep, PI_NOT_FOUND);
    },
  }),
  defineRoute({
    ...spi,
    path: '/radiodns/spi/3.1/dab/{gcc}/{eid}/{sid}/{scids}/{file}',
    operationId: 'getRadioDnsProgrammeInformationByDab',
    summary: 'RadioDNS Programme Information by DAB bearer (`dab:{gcc}.{eid}.{sid}.{scids}`)',
    params: Type.Object(
      {
        gcc: HEX('3'),
        eid: HEX('4'),
        sid: Type.String({ pattern: '^([0-9a-fA-F]{4}|[0-9a-fA-F]{8})$' }),
        scids: Type.String({ pattern: '^([0-9a-fA-F]|[0-9a-fA-F]{3})$' }),
        file: PiFile,
      },
      { additionalProperties: false },
    ),
    responses: xmlResponses('PI.xml of the service with this DAB bearer.'),
    stored: (p, _req, svc) => storedSpi(svc, piByBearerKey(dabBearer(p), p.file)),
    async handler({ ctx, svc, params }) {
      const bearer = dabBearer(params);
      const rep = await piDocument(svc, piByBearerKey(bearer, params.file), (db) => servicesByBearer(db, bearer), params.file);
      sendSpi(ctx, rep, PI_NOT_FOUND);
    },
  }),
  defineRoute({
    method: 'get',
    path: '/radiodns/logos/{stationId}/{versionId}/{file}',
    operationId: 'getRadioDnsLogo',
    summary: 'A RadioDNS logo rendition (`{width}x{height}.png`: 32x32, 112x32, 128x128, 320x240, 600x600)',
    description:
      'Anonymous. PNG, the station logo letterboxed on a transparent background (never stretched). `Cache-Control: public, max-age=300`, strong ETag and 304.',
    tags: ['radiodns'],
    surface: 'media',
    station: 'id',
    rateLimit: 'anonymous',
    params: Type.Object(
      {
        stationId: Type.String({ minLength: 1, maxLength: 80 }),
        versionId: Type.String({ pattern: '^[0-9a-fA-F-]{36}$' }),
        file: Type.String({ pattern: '^[0-9]{1,4}x[0-9]{1,4}\\.png$', description: '`{width}x{height}.png`' }),
      },
      { additionalProperties: false },
    ),
    responses: {
      200: { description: 'The PNG.', contentType: LOGO_MIME },
      304: { description: 'Not modified (If-None-Match matched the ETag).' },
      400: { description: 'Malformed path.', schema: ErrorBody },
      404: { description: 'Station unknown, inactive or offline; not its current logo; a size SI.xml does not list.', schema: ErrorBody },
      429: { description: 'Rate limited (per client IP).', schema: ErrorBody },
    },
    async handler({ ctx, svc, station, params }) {
      const [width, height] = params.file.slice(0, -4).split('x').map(Number);
      const logo = await findLogo(svc, station, params.versionId.toLowerCase(), width, height);
      if (!logo) throw new NotFoundError('Logo not found.');
      sendCacheable(ctx, logo.bytes, LOGO_MIME, logo.etag, SPI_CACHE_CONTROL);
    },
  }),
];
