import { ValidationError } from '../../lib/errors.ts';
import { registerStationSetting, registerStreamField } from '../stations/settings.ts';
import type { StreamStats } from './model.ts';
import { RoyaltiesInput, RoyaltiesOut, StreamStatsInput, StreamStatsOut } from './schemas.ts';
import { DEFAULT_ROYALTIES, type Royalties } from './settings.ts';

// How the audience feature plugs into the station (docs/architecture.md, "A feature's station setting"):
// the `royalties` setting (stored in `stations.royalties`) and a `stats` field on each stream entry.

declare module '../stations/model.ts' {
  interface StationSettings {
    /** The census report's settings (docs/audience.md#filing-the-soundexchange-report-of-use); every key present. */
    royalties: Royalties;
  }
  interface StreamEntryFields {
    /** Where the poller reads the stream's listener count; null when it has none. */
    stats: StreamStats | null;
  }
}

registerStationSetting({
  key: 'royalties',
  column: 'royalties',
  input: RoyaltiesInput,
  output: RoyaltiesOut,
  // The sent fields are merged into what is stored (null clears one).
  patch: 'merge',
  fromStored: (stored) => ({ ...DEFAULT_ROYALTIES, ...stored }),
  fromInput: (input, base) => ({ ...base, ...input }) as Royalties,
});

registerStreamField({
  key: 'stats',
  input: StreamStatsInput,
  output: StreamStatsOut,
  fromStored: (stored) => (stored ? ({ ...stored } as StreamStats) : null),
  // Stream entries are part of the public station document: a status URL carrying credentials would be
  // shown to every listener. Only plain http(s) URLs are taken.
  async check(stats, { path }) {
    if (!stats) return;
    const url = new URL(stats.url);
    if (url.protocol !== 'http:' && url.protocol !== 'https:')
      throw new ValidationError('Invalid stream stats.', [
        { path: `${path}.url`, code: 'invalid_format', message: `${path}.url must be an http or https URL` },
      ]);
    if (url.username || url.password || /(^|&)(pass|password)=/i.test(url.search.slice(1)))
      throw new ValidationError('Invalid stream stats.', [
        {
          path: `${path}.url`,
          code: 'invalid_value',
          message: `${path}.url must not carry credentials: stream entries are shown in the public station document (use a status URL that needs none)`,
        },
      ]);
  },
});
