import type { JobPayload } from '../src/jobs.ts';
import type { Services } from '../src/services.ts';
import { sweepNotifications } from '../src/domains/push/notifications/maintenance.ts';
import { fetchExpoReceipts } from '../src/domains/push/notifications/sending/receipts.ts';
import { sendNotification } from '../src/domains/push/notifications/sending/send.ts';

/** One of the jobs sending a notification (src/domains/push/notifications/sending/send.ts); the parts share the devices. */
export const pushSend = (payload: JobPayload<'push.send'>, svc: Services) => sendNotification(svc, payload.notificationId);

export const pushReceipts = (payload: JobPayload<'push.receipts'>, svc: Services) => fetchExpoReceipts(svc, payload.notificationId);

export const pushSweep = (_payload: JobPayload<'push.sweep'>, svc: Services) => sweepNotifications(svc);
