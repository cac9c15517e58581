import { Readable } from 'node:stream';
import { DateTime } from 'luxon';
import type { Db } from '../../lib/db.ts';
import { RoyaltiesNotConfiguredError } from '../../lib/errors.ts';
import type { Services } from '../../services.ts';
import { playBatches, playsQuery, type PlayKey } from '../nowPlaying/plays.ts';
import { asciiField } from './ascii.ts';
import { fixDuePlays } from './performances.ts';
import type { Royalties } from './settings.ts';

/** Royalties with both settings present. */
export type FiledRoyalties = { [K in keyof Royalties]: NonNullable<Royalties[K]> };

// The SoundExchange census Report of Use (docs/audience.md#filing-the-soundexchange-report-of-use): one tab-separated
// ASCII row per music play of a month in the station's time zone. Every play of the month that is due
// is fixed first (the job would have done it), so each row's figure is the stored one; a play not fixed
// yet (still on air) counts as unknown. The plays are read in keyset batches (nowPlaying/plays.ts, as the
// play log reads them) and written as the socket drains: a month never sits in memory.

export const REPORT_COLUMNS = [
  'NAME_OF_SERVICE',
  'TRANSMISSION_CATEGORY',
  'FEATURED_ARTIST',
  'SOUND_RECORDING_TITLE',
  'ISRC',
  'ALBUM_TITLE',
  'MARKETING_LABEL',
  'ACTUAL_TOTAL_PERFORMANCES',
] as const;

export interface ReportMonth {
  from: Date;
  to: Date;
  /** First and last local day, YYYYMMDD. */
  firstDay: string;
  lastDay: string;
}

export function reportMonth(month: string, timezone: string): ReportMonth {
  const start = DateTime.fromFormat(month, 'yyyy-MM', { zone: timezone }).startOf('month');
  const end = start.plus({ months: 1 });
  return {
    from: start.toJSDate(),
    to: end.toJSDate(),
    firstDay: start.toFormat('yyyyMMdd'),
    lastDay: end.minus({ days: 1 }).toFormat('yyyyMMdd'),
  };
}

/** The settings the report needs, or 409 naming each one missing. */
export function requireRoyalties(royalties: Partial<Royalties> | null | undefined): FiledRoyalties {
  const missing = (['serviceName', 'transmissionCategory'] as const).filter((k) => !royalties?.[k]);
  if (missing.length)
    throw new RoyaltiesNotConfiguredError(
      `The station's royalties settings lack ${missing.map((k) => `royalties.${k}`).join(' and ')}; set them in the station settings before filing a report.`,
    );
  return royalties as FiledRoyalties;
}

/** `{serviceName}{YYYYMMDD}_{YYYYMMDD}_{category}.txt`, the service name reduced to letters, digits, `-` and `_`. */
export function reportFileName(royalties: FiledRoyalties, month: ReportMonth): string {
  const service = asciiField(royalties.serviceName).replace(/[^A-Za-z0-9_-]+/g, '') || 'station';
  return `${service}${month.firstDay}_${month.lastDay}_${royalties.transmissionCategory}.txt`;
}

/** Fixes what is due, then counts the plays whose figure is unknown (for the header sent before the body). */
export async function prepareReport(
  svc: Pick<Services, 'db' | 'config' | 'clock'>,
  stationId: string,
  month: ReportMonth,
): Promise<number> {
  await fixDuePlays(svc, { stationId, from: month.from, to: month.to });
  const [{ unknown }] = await playsQuery(svc.db, stationId, month)
    .leftJoin('play_performances as pp', 'pp.observation_id', 'o.id')
    .select<Array<{ unknown: string }>>(svc.db.raw('count(*) FILTER (WHERE pp.performances IS NULL) AS unknown'));
  return Number(unknown);
}

interface ReportRow extends PlayKey {
  artist: string | null;
  title: string;
  isrc: string | null;
  album: string | null;
  performances: number | null;
}

export function reportText(db: Db, stationId: string, royalties: FiledRoyalties, month: ReportMonth): Readable {
  const service = asciiField(royalties.serviceName);
  async function* lines(): AsyncGenerator<string> {
    yield REPORT_COLUMNS.join('\t') + '\r\n';
    const batches = playBatches<ReportRow>(db, stationId, month, (query) =>
      query
        .leftJoin('play_performances as pp', 'pp.observation_id', 'o.id')
        .select('o.artist', 'o.title', 'o.isrc', 'o.album', 'pp.performances'),
    );
    for await (const rows of batches) {
      let chunk = '';
      for (const row of rows) {
        chunk +=
          [
            service,
            royalties.transmissionCategory,
            asciiField(row.artist),
            asciiField(row.title),
            row.isrc ?? '',
            asciiField(row.album),
            // No label is known to Waveline (docs/audience.md#filing-the-soundexchange-report-of-use): the column stays empty.
            '',
            row.performances === null ? '' : String(row.performances),
          ].join('\t') + '\r\n';
      }
      if (chunk) yield chunk;
    }
  }
  return Readable.from(lines());
}
