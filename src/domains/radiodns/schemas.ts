import { Type, Nullable, type Static } from '../../http/schema.ts';
import { UUID_PATTERN } from '../../lib/ids.ts';
import { BundleMediaKey } from '../stations/settings.ts';
import { BEARER_PATTERN, FQDN_PATTERN, GENRE_HREF_PATTERN, SERVICE_IDENTIFIER_PATTERN } from './model.ts';

// The `radiodns` station setting as operators send it (admin POST/PATCH, import bundles) and as the
// admin view shows it. Cross-field rules and the logo check are in settings.ts.

const Bearer = Type.Object(
  {
    id: Type.String({
      pattern: BEARER_PATTERN,
      maxLength: 100,
      description: 'bearer URI (ETSI TS 103 270): fm:{gcc}.{pi}.{frequency}, dab:{gcc}.{eid}.{sid}.{scids}, hd:{cc}.{tx}',
      examples: ['fm:de0.d3a1.10170'],
    }),
    cost: Type.Integer({ minimum: 0, maximum: 1000, description: 'lower is preferred by receivers' }),
  },
  { additionalProperties: false },
);

const Genre = Type.Object(
  {
    href: Type.String({ pattern: GENRE_HREF_PATTERN, maxLength: 200, examples: ['urn:tva:metadata:cs:ContentCS:2004:3.6.8'] }),
    name: Type.String({ minLength: 1, maxLength: 100 }),
  },
  { additionalProperties: false },
);

export const RadioDnsInput = Type.Object(
  {
    enabled: Type.Optional(Type.Boolean({ description: 'publish SPI documents (default false)' })),
    fqdn: Type.Optional(Nullable(Type.String({ pattern: FQDN_PATTERN, maxLength: 253, description: 'the host name SI.xml is asked for' }))),
    serviceIdentifier: Type.Optional(Nullable(Type.String({ pattern: SERVICE_IDENTIFIER_PATTERN }))),
    shortName: Type.Optional(Nullable(Type.String({ minLength: 1, maxLength: 8 }))),
    mediumName: Type.Optional(Nullable(Type.String({ minLength: 1, maxLength: 16 }))),
    bearers: Type.Optional(Type.Array(Bearer, { maxItems: 20 })),
    logoVersionId: Type.Optional(
      Nullable(Type.String({ pattern: UUID_PATTERN, description: 'an uploaded image version of the station, at least 600×600' })),
    ),
    genres: Type.Optional(Type.Array(Genre, { maxItems: 10 })),
  },
  {
    title: 'RadioDnsSettingInput',
    additionalProperties: false,
    description:
      'RadioDNS SPI (docs/radiodns.md). Merged into what is stored; enabled needs fqdn, serviceIdentifier, shortName and mediumName.',
  },
);
export type RadioDnsInput = Static<typeof RadioDnsInput>;

export const RadioDnsOut = Type.Object(
  {
    enabled: Type.Boolean(),
    fqdn: Nullable(Type.String()),
    serviceIdentifier: Nullable(Type.String()),
    shortName: Nullable(Type.String()),
    mediumName: Nullable(Type.String()),
    bearers: Type.Array(Type.Object({ id: Type.String(), cost: Type.Integer() })),
    logoVersionId: Nullable(Type.String()),
    genres: Type.Array(Type.Object({ href: Type.String(), name: Type.String() })),
  },
  { title: 'RadioDnsSetting' },
);

/** The setting in an import bundle's station: `logoKey` names the bundle's media entry used as the logo. */
export const RadioDnsBundle = Type.Object(
  { ...RadioDnsInput.properties, logoKey: Type.Optional(BundleMediaKey) },
  { additionalProperties: false, description: 'the radiodns setting; `logoKey` names the bundle media entry used as the logo' },
);
