// The RadioDNS setting of a station and the rules of ETSI TS 102 818 V3.4.1 the SPI documents follow
// (docs/radiodns.md#what-the-documents-hold-and-the-choices-made).
import { createHash } from 'node:crypto';

export interface RadioDnsBearer {
  /** Bearer URI (ETSI TS 103 270): `fm:{gcc}.{pi}.{frequency}`, `dab:{gcc}.{eid}.{sid}.{scids}`, `hd:{cc}.{tx}`. */
  id: string;
  cost: number;
}

export interface RadioDnsGenre {
  href: string;
  name: string;
}

export interface RadioDns {
  enabled: boolean;
  fqdn: string | null;
  serviceIdentifier: string | null;
  shortName: string | null;
  mediumName: string | null;
  bearers: RadioDnsBearer[];
  logoVersionId: string | null;
  genres: RadioDnsGenre[];
}

export const DEFAULT_RADIODNS: Readonly<RadioDns> = Object.freeze({
  enabled: false,
  fqdn: null,
  serviceIdentifier: null,
  shortName: null,
  mediumName: null,
  bearers: [],
  logoVersionId: null,
  genres: [],
});

/** The stored block (possibly partial, `{}` when never set) with every key present. */
export function radiodnsFromStored(stored: Partial<RadioDns> | null | undefined): RadioDns {
  return {
    ...DEFAULT_RADIODNS,
    ...(stored ?? {}),
    bearers: stored?.bearers ?? [],
    genres: stored?.genres ?? [],
  };
}

// Patterns of the setting. Hex parts are matched case-insensitively and stored lower-case.
export const FQDN_PATTERN = '^(?=.{1,253}$)([A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?)(\\.[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*$';
export const SERVICE_IDENTIFIER_PATTERN = '^[a-z0-9]{1,16}$';
/**
 * Broadcast bearers in the bearer URI form of ETSI TS 103 270: FM `fm:{gcc}.{pi}.{frequency}` (gcc:
 * 3 hex digits, or an ISO 3166 two-letter country code; PI 4 hex; frequency 5 digits in 10 kHz),
 * DAB `dab:{gcc}.{eid}.{sid}.{scids}` (3, 4, 4 or 8, 1 or 3 hex; optionally `.{uatype}`), HD Radio
 * `hd:{cc}.{tx}` (3 and 5 hex, optionally `.{mid}`).
 */
export const BEARER_PATTERN =
  '^(fm:([0-9a-fA-F]{3}|[a-zA-Z]{2})\\.[0-9a-fA-F]{4}\\.[0-9]{5}' +
  '|dab:[0-9a-fA-F]{3}\\.[0-9a-fA-F]{4}\\.([0-9a-fA-F]{4}|[0-9a-fA-F]{8})\\.([0-9a-fA-F]|[0-9a-fA-F]{3})(\\.[0-9a-fA-F]{3})?' +
  '|hd:[0-9a-fA-F]{3}\\.[0-9a-fA-F]{5}(\\.[0-9])?)$';
export const GENRE_HREF_PATTERN = '^urn:tva:metadata:cs:ContentCS:2004:[0-9]+(\\.[0-9]+)*$';

/** The smallest logo accepted: the largest rendition (600×600) is never upscaled from less. */
export const MIN_LOGO_SIZE = 600;

export interface LogoSize {
  width: number;
  height: number;
  /** The SPI `type` of the rendition; absent on those that have none (128×128, 320×240). */
  type: 'logo_colour_square' | 'logo_colour_rectangle' | 'logo_unrestricted';
}

/** The five renditions SI.xml lists (the standard's recommended sizes). */
export const LOGO_SIZES: readonly LogoSize[] = [
  { width: 32, height: 32, type: 'logo_colour_square' },
  { width: 112, height: 32, type: 'logo_colour_rectangle' },
  { width: 128, height: 128, type: 'logo_unrestricted' },
  { width: 320, height: 240, type: 'logo_unrestricted' },
  { width: 600, height: 600, type: 'logo_unrestricted' },
];

export const LOGO_MIME = 'image/png';

/** The standard's text limits (spi_34.xsd). */
export const LIMITS = { shortName: 8, mediumName: 16, longName: 128, shortDescription: 180, longDescription: 1200 } as const;

/**
 * A text cut to `max` characters at a word boundary (over-long texts are cut, never rejected:
 * docs/radiodns.md#what-the-documents-hold-and-the-choices-made). A single word longer than `max` is cut
 * inside it. Whitespace is collapsed first.
 */
export function cutAtWord(text: string, max: number): string {
  const clean = text.replace(/\s+/g, ' ').trim();
  const chars = Array.from(clean);
  if (chars.length <= max) return clean;
  const head = chars.slice(0, max + 1).join('');
  const at = head.lastIndexOf(' ');
  const cut = at > 0 ? head.slice(0, at) : chars.slice(0, max).join('');
  return cut.trim();
}

/**
 * A programme's (or program group's) `shortId` (0–16777215): 24 bits of a SHA-256 of its id. Stable — the
 * same broadcast always gets the same one — and derived, so it needs no storage. Hashed rather than cut
 * from the UUID, so ids that differ only in a few digits (an operator's hand-made `…000001`, `…000002`,
 * or a program and its broadcast numbered alike) do not share one.
 */
export function shortIdOf(uuid: string): number {
  return createHash('sha256').update(uuid.toLowerCase()).digest().readUIntBE(0, 3);
}
