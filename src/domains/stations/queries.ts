import type { Db } from '../../lib/db.ts';
import { stationFromRow, type Station, type StationRow } from './model.ts';

export async function findStationBySlug(db: Db, slug: string): Promise<Station | null> {
  const row = await db<StationRow>('stations').where({ slug }).first();
  return row ? stationFromRow(row) : null;
}

export async function findStationById(db: Db, id: string): Promise<Station | null> {
  const row = await db<StationRow>('stations').where({ id }).first();
  return row ? stationFromRow(row) : null;
}
