import { Nullable, StringEnum, Timestamp, Type, Uuid, type Static } from '../../../http/schema.ts';

// The admin notification routes' bodies and views (docs/push.md#sending).

/** Topics a notification can be sent to (admin route, `notify` on publish). */
export const TOPICS = ['alerts', 'content'] as const;
/** A topic devices switch on or off: a notification to it goes to every device with it on. */
export type DeviceTopic = (typeof TOPICS)[number];
/** A notification's topic: one of TOPICS, or `reminders` (docs/push.md#follows-and-reminders). */
export const NOTIFICATION_TOPICS = [...TOPICS, 'reminders'] as const;
export type Topic = (typeof NOTIFICATION_TOPICS)[number];
export const NOTIFICATION_SOURCES = ['admin', 'content', 'reminder'] as const;
export type NotificationSource = (typeof NOTIFICATION_SOURCES)[number];
export const NOTIFICATION_STATUSES = ['queued', 'sending', 'done', 'cancelled', 'expired', 'failed'] as const;
export type NotificationStatus = (typeof NOTIFICATION_STATUSES)[number];

const Text = (maxLength: number) => Type.String({ minLength: 1, maxLength });

const NotificationData = Type.Record(Type.String(), Type.String(), { description: 'string values only, at most 2 KiB as JSON' });
const CollapseKey = Type.String({ minLength: 1, maxLength: 64, pattern: '^[A-Za-z0-9._-]+$' });
const TtlSeconds = Type.Integer({ minimum: 60, maximum: 2_419_200 });
const NotificationUrl = Type.String({ minLength: 1, maxLength: 2048, description: 'absolute https URL or a path (`/…`)' });

export const SendNotificationBody = Type.Object(
  {
    topic: StringEnum(TOPICS),
    title: Text(200),
    body: Type.Optional(Type.String({ maxLength: 1000 })),
    url: Type.Optional(NotificationUrl),
    data: Type.Optional(NotificationData),
    ttlSeconds: Type.Optional(TtlSeconds),
    collapseKey: Type.Optional(CollapseKey),
    idempotencyKey: Type.Optional(Text(200)),
  },
  { title: 'PushNotificationInput', additionalProperties: false },
);
export type SendNotificationBody = Static<typeof SendNotificationBody>;

/** `notify` on publish: a `content` notification for the published revision. */
export const PublishNotify = Type.Object(
  {
    title: Type.Optional(Text(200)),
    body: Type.Optional(Type.String({ maxLength: 1000 })),
    url: Type.Optional(NotificationUrl),
    ttlSeconds: Type.Optional(TtlSeconds),
    collapseKey: Type.Optional(CollapseKey),
  },
  { title: 'PublishNotify', additionalProperties: false },
);
export type PublishNotify = Static<typeof PublishNotify>;

export const NotificationCounts = Type.Object(
  {
    targeted: Type.Integer(),
    sent: Type.Integer(),
    failed: Type.Integer(),
    pruned: Type.Integer(),
    pending: Type.Integer(),
  },
  { title: 'PushNotificationCounts', description: 'sent + failed + pruned + pending = targeted' },
);

export const NotificationView = Type.Object(
  {
    id: Uuid,
    topic: StringEnum(NOTIFICATION_TOPICS),
    source: StringEnum(NOTIFICATION_SOURCES),
    recordId: Nullable(Uuid),
    broadcastId: Nullable(Type.String({ description: 'the broadcast a reminder is about (source `reminder`); null otherwise' })),
    title: Type.String(),
    body: Nullable(Type.String()),
    url: Nullable(Type.String()),
    data: NotificationData,
    ttlSeconds: Type.Integer(),
    collapseKey: Nullable(Type.String()),
    status: StringEnum(NOTIFICATION_STATUSES),
    error: Nullable(Type.String()),
    counts: NotificationCounts,
    createdAt: Timestamp,
    startedAt: Nullable(Timestamp),
    finishedAt: Nullable(Timestamp),
  },
  { title: 'PushNotification' },
);
export type NotificationView = Static<typeof NotificationView>;

export const NotificationList = Type.Object(
  { notifications: Type.Array(NotificationView), nextCursor: Nullable(Type.String()) },
  { title: 'PushNotificationList' },
);

export const NotificationParams = Type.Object(
  { stationId: Type.String({ minLength: 1, maxLength: 80 }), notificationId: Uuid },
  { additionalProperties: false },
);
export type NotificationParams = Static<typeof NotificationParams>;

export const NotificationListQuery = Type.Object(
  {
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 25 })),
    cursor: Type.Optional(Type.String({ minLength: 1, maxLength: 500 })),
  },
  { additionalProperties: false },
);
export type NotificationListQuery = Static<typeof NotificationListQuery>;
