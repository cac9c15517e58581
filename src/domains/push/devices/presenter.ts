import type { DeviceCountRow } from './queries.ts';
import type { DeviceCount, PushAck } from './schemas.ts';

/** The 200 body of a device registration is `{ok: true}` (docs/push.md#routes). */
export const presentAck = (): PushAck => ({ ok: true });

export const presentDeviceCount = (row: DeviceCountRow): DeviceCount => ({
  total: row.total,
  platforms: { ios: row.ios, android: row.android },
  topics: { alerts: row.alerts, content: row.content },
});
