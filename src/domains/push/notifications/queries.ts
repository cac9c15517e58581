import { NotFoundError } from '../../../lib/errors.ts';
import { keysetPage } from '../../../lib/keysetCursor.ts';
import type { Services } from '../../../services.ts';
import type { NotificationRow } from './model.ts';
import { presentNotification } from './presenter.ts';
import type { NotificationListQuery } from './schemas.ts';

export async function requireNotification(svc: Pick<Services, 'db'>, stationId: string, id: string): Promise<NotificationRow> {
  const row = await svc.db<NotificationRow>('push_notifications').where({ id, station_id: stationId }).first();
  if (!row) throw new NotFoundError('Notification not found.');
  return row;
}

/** The station's notifications, newest first, a keyset page at a time. */
export async function notificationsPage(svc: Pick<Services, 'db' | 'config'>, stationId: string, query: NotificationListQuery) {
  const rows = svc.db<NotificationRow>('push_notifications').where('station_id', stationId);
  const { page, nextCursor } = await keysetPage<NotificationRow>(
    rows,
    svc.config.secret,
    { s: stationId },
    'this station’s notifications',
    query,
  );
  return { notifications: page.map(presentNotification), nextCursor };
}
