import type { DeviceCountRow } from './queries.ts';
import type { DeviceCount, PushAck } from './schemas.ts';

/** The contract leaves the 200 body open; decisions.md fixes it as `{ok: true}`. */
export const presentAck = (): PushAck => ({ ok: true });

export const presentDeviceCount = (row: DeviceCountRow): DeviceCount => ({
  total: row.total,
  platforms: { ios: row.ios, android: row.android },
  topics: { alerts: row.alerts, content: row.content },
});
