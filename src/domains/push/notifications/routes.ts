import { adminErrorResponses, adminWrite } from '../../../http/responses.ts';
import { defineRoute } from '../../../http/route.ts';
import { ErrorBody } from '../../../http/schema.ts';
import { StationIdParams } from '../../stations/schemas.ts';
import { NotificationList, NotificationListQuery, NotificationParams, NotificationView, SendNotificationBody } from './schemas.ts';
import { createNotification } from './commands.ts';
import { cancelNotification } from './lifecycle.ts';
import { presentNotification } from './presenter.ts';
import { notificationsPage, requireNotification } from './queries.ts';

// The admin notification routes (docs/push.md#sending): send, list, one notification, cancel. The
// credentials' routes are the providers' (push/providers/routes.ts), listed before these.

const NOTIFICATIONS = '/admin/v1/stations/{stationId}/push/notifications';
/** The 404 text every admin push route shares (push/providers/routes.ts). */
const errors = adminErrorResponses('Station (or notification, or credentials) not found.');
const notConfigured = {
  409: {
    description: 'PUSH_NOT_CONFIGURED (no provider, no credentials, or modules.push off; the message names which) or IDEMPOTENCY_CONFLICT.',
    schema: ErrorBody,
  },
};

export const pushNotificationRoutes = [
  defineRoute({
    ...adminWrite,
    method: 'post',
    path: NOTIFICATIONS,
    operationId: 'adminSendPushNotification',
    access: { scope: 'push:send', action: 'push.send' },
    summary: 'Send a push notification to every device with the topic on',
    description:
      'Answers 202 with the notification; the worker sends it. The same `idempotencyKey` within 24 h with the same body answers 200 with the existing notification (nothing is sent again); with another body 409 IDEMPOTENCY_CONFLICT.',
    params: StationIdParams,
    body: SendNotificationBody,
    responses: {
      202: { description: 'Queued.', schema: NotificationView },
      200: { description: 'The notification this idempotencyKey already created.', schema: NotificationView },
      ...errors,
      ...notConfigured,
    },
    async handler({ ctx, svc, params, body }) {
      const station = await svc.stations.require(params.stationId);
      const { row, created } = await createNotification(svc, station, body);
      ctx.status = created ? 202 : 200;
      return presentNotification(row);
    },
  }),
  defineRoute({
    ...adminWrite,
    method: 'get',
    path: NOTIFICATIONS,
    operationId: 'adminListPushNotifications',
    access: { scope: 'push:send' },
    summary: 'The station’s notifications, newest first (kept 30 days)',
    params: StationIdParams,
    query: NotificationListQuery,
    responses: { 200: { description: 'A page of notifications.', schema: NotificationList }, ...errors },
    async handler({ svc, params, query }) {
      const station = await svc.stations.require(params.stationId);
      return notificationsPage(svc, station.id, query);
    },
  }),
  defineRoute({
    ...adminWrite,
    method: 'get',
    path: `${NOTIFICATIONS}/{notificationId}`,
    operationId: 'adminGetPushNotification',
    access: { scope: 'push:send' },
    summary: 'One notification with its live counts',
    params: NotificationParams,
    responses: { 200: { description: 'The notification.', schema: NotificationView }, ...errors },
    async handler({ svc, params }) {
      const station = await svc.stations.require(params.stationId);
      return presentNotification(await requireNotification(svc, station.id, params.notificationId));
    },
  }),
  defineRoute({
    ...adminWrite,
    method: 'post',
    path: `${NOTIFICATIONS}/{notificationId}/cancel`,
    operationId: 'adminCancelPushNotification',
    access: { scope: 'push:send', action: 'push.cancel' },
    summary: 'Cancel a notification: devices not yet sent to are not sent to',
    description:
      'A notification that already ended is answered as it is. A request not yet started when this answers is never started, whichever worker holds its batch; requests already on the wire finish and are counted. Devices not sent to count as failed.',
    params: NotificationParams,
    responses: { 200: { description: 'The notification.', schema: NotificationView }, ...errors },
    async handler({ svc, params }) {
      const station = await svc.stations.require(params.stationId);
      const row = await requireNotification(svc, station.id, params.notificationId);
      await cancelNotification(svc, row.id);
      return presentNotification(await requireNotification(svc, station.id, row.id));
    },
  }),
];
