import { DateTime } from 'luxon';
import type { Db } from '../../lib/db.ts';
import type { Station, StationRow } from '../stations/model.ts';
import { stationFromRow } from '../stations/queries.ts';

// Reads behind the SPI documents. Receivers name a service by host name, by fqdn + serviceIdentifier or
// by one of its broadcast bearers; only stations with radiodns enabled that listeners can reach count.

const published = (db: Db) =>
  db<StationRow>('stations').where({ active: true, public_online: true }).whereRaw(`(radiodns->>'enabled')::boolean`);

/** Every published service whose fqdn is `host`, by id. */
export async function servicesByHost(db: Db, host: string): Promise<Station[]> {
  const rows = await published(db).whereRaw(`radiodns->>'fqdn' = ?`, [host]).orderBy('id');
  return rows.map(stationFromRow);
}

/**
 * A service id or a bearer should name one station; when several enabled ones share it (a copied
 * setting), PI.xml tries them newest change first (routes.ts: the first with the date in its published
 * schedule answers). At most a few: it is a misconfiguration, not a list to page through.
 */
const CANDIDATES = 5;

export async function servicesById(db: Db, fqdn: string, serviceIdentifier: string): Promise<Station[]> {
  const rows = await published(db)
    .whereRaw(`radiodns->>'fqdn' = ? AND radiodns->>'serviceIdentifier' = ?`, [fqdn, serviceIdentifier])
    .orderBy([{ column: 'updated_at', order: 'desc' }, { column: 'id' }])
    .limit(CANDIDATES);
  return rows.map(stationFromRow);
}

export async function servicesByBearer(db: Db, bearerId: string): Promise<Station[]> {
  const rows = await published(db)
    .whereRaw(`radiodns->'bearers' @> ?::jsonb`, [JSON.stringify([{ id: bearerId }])])
    .orderBy([{ column: 'updated_at', order: 'desc' }, { column: 'id' }])
    .limit(CANDIDATES);
  return rows.map(stationFromRow);
}

export interface ProgrammeRow {
  id: string;
  program_id: string;
  title: string;
  program_description: string | null;
  starts_at: Date;
  ends_at: Date;
  updated_at: Date;
  program_updated_at: Date;
}

export interface LocalDay {
  start: DateTime;
  end: DateTime;
}

/**
 * [date 00:00, next date 00:00) in the zone (DST-correct: 23 or 25 hours on change days). Where a
 * change skips midnight itself (America/Santiago, Asia/Beirut: 00:00 → 01:00), the day starts at the
 * first local time that exists, and it still ends at the next date's start: adding a day to that
 * shifted start would end it at 01:00 and overlap the next date's document by an hour.
 */
export function localDay(date: string, zone: string): LocalDay | null {
  const start = DateTime.fromFormat(date, 'yyyyMMdd', { zone });
  if (!start.isValid) return null;
  return { start, end: start.plus({ days: 1 }).startOf('day') };
}

/**
 * The published, non-cancelled broadcasts overlapping the day, by start; null when the day lies
 * outside the station's published schedule (before its first such broadcast or after its last).
 */
export async function programmesOf(db: Db, stationId: string, day: LocalDay): Promise<ProgrammeRow[] | null> {
  const from = day.start.toJSDate();
  const to = day.end.toJSDate();
  const live = (q: ReturnType<Db>) =>
    q.where({ 'b.station_id': stationId, 'b.published': true, 'b.cancelled': false }).andWhere('b.cancellation_reason', '');
  const span = await live(db('broadcasts as b')).first<{ first: Date | null; last: Date | null }>(
    db.raw('min(b.starts_at) AS first'),
    db.raw('max(b.ends_at) AS last'),
  );
  if (!span?.first || !span.last || new Date(span.first) >= to || new Date(span.last) <= from) return null;
  return live(db('broadcasts as b'))
    .join('programs as p', 'p.id', 'b.program_id')
    .andWhere('b.starts_at', '<', to)
    .andWhere('b.ends_at', '>', from)
    .orderBy([{ column: 'b.starts_at' }, { column: 'b.id' }])
    .select<ProgrammeRow[]>(
      'b.id',
      'b.program_id',
      db.raw('COALESCE(b.title, p.title) AS title'),
      'p.description as program_description',
      'b.starts_at',
      'b.ends_at',
      'b.updated_at',
      'p.updated_at as program_updated_at',
    );
}
