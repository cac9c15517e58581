import type { Station } from '../stations/model.ts';

// The audience feature's station settings (docs/audience.md#pointing-waveline-at-your-listener-counts,
// docs/audience.md#filing-the-soundexchange-report-of-use):
// - `royalties: {serviceName, transmissionCategory}` for the census report;
// - `stats: {kind, url, mount?}` on each `profile.streamUrls[]` entry (src/domains/audience/model.ts reads it).
// Both are registered with the station core's registry in station.ts (docs/architecture.md, "A feature's
// station setting").

/** SoundExchange transmission categories A–M (37 CFR 370 report of use). */
export const TRANSMISSION_CATEGORIES = ['A', 'B', 'C', 'D', 'E', 'F', 'G', 'H', 'I', 'J', 'K', 'L', 'M'] as const;

export interface Royalties {
  serviceName: string | null;
  transmissionCategory: (typeof TRANSMISSION_CATEGORIES)[number] | null;
}

export const DEFAULT_ROYALTIES: Royalties = Object.freeze({ serviceName: null, transmissionCategory: null });

/** The station's royalties setting, every key present. */
export const royaltiesOf = (station: Station): Royalties => station.royalties;
