import type { Db } from '../../../lib/db.ts';
import type { Topics } from './schemas.ts';

/** The push_devices column of each topic switch (a notification to a topic goes to the devices with it on). */
export const TOPIC_COLUMNS = { alerts: 'topic_alerts', content: 'topic_content' } as const satisfies Record<keyof Topics, string>;

export interface DeviceCountRow {
  total: number;
  ios: number;
  android: number;
  alerts: number;
  content: number;
}

/** Registered devices of a station, by platform and by topic switched on (operator view). */
export async function countDevices(db: Db, stationId: string): Promise<DeviceCountRow> {
  const row = await db('push_devices')
    .where({ station_id: stationId })
    .first(
      db.raw('count(*)::int AS total'),
      db.raw(`count(*) FILTER (WHERE platform = 'ios')::int AS ios`),
      db.raw(`count(*) FILTER (WHERE platform = 'android')::int AS android`),
      db.raw('count(*) FILTER (WHERE topic_alerts)::int AS alerts'),
      db.raw('count(*) FILTER (WHERE topic_content)::int AS content'),
    );
  return row as DeviceCountRow;
}
