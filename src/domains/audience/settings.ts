import type { Station } from '../stations/model.ts';

// The audience feature's station settings (decisions.md, "Audience"):
// - `royalties: {serviceName, transmissionCategory}` for the census report;
// - `stats: {kind, url, mount?}` on each `profile.streamUrls[]` entry (src/domains/audience/model.ts reads it).
// They are registered with the station core's feature settings registry (docs/architecture.md, "A
// feature's station setting"); until that registry exists the stored value is read as it is stored.

/** SoundExchange transmission categories A–M (37 CFR 370 report of use). */
export const TRANSMISSION_CATEGORIES = ['A', 'B', 'C', 'D', 'E', 'F', 'G', 'H', 'I', 'J', 'K', 'L', 'M'] as const;

export interface Royalties {
  serviceName: string | null;
  transmissionCategory: (typeof TRANSMISSION_CATEGORIES)[number] | null;
}

export const DEFAULT_ROYALTIES: Royalties = Object.freeze({ serviceName: null, transmissionCategory: null });

/** The station's royalties setting, every key present. */
export function royaltiesOf(station: Station): Royalties {
  const stored = (station as Station & { royalties?: Partial<Royalties> | null }).royalties;
  return { ...DEFAULT_ROYALTIES, ...stored };
}
