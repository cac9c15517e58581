import { Nullable, StringEnum, Timestamp, Type, Uuid, type Static } from '../../http/schema.ts';

// Admin webhook routes (docs/webhooks.md#registering-operator-token).

export const WEBHOOK_EVENTS = [
  'now-playing.changed',
  'broadcast.started',
  'broadcast.ended',
  'schedule.changed',
  'content.published',
  'content.unpublished',
  'push.finished',
  'inbox.message',
] as const;
export type WebhookEventType = (typeof WEBHOOK_EVENTS)[number] | 'ping';

export const MAX_WEBHOOKS_PER_STATION = 20;

const Url = Type.String({ minLength: 1, maxLength: 2048, description: 'https:// URL of the receiver' });
const Events = Type.Array(StringEnum(WEBHOOK_EVENTS), { minItems: 1, maxItems: WEBHOOK_EVENTS.length, uniqueItems: true });
const Description = Type.String({ maxLength: 500 });

export const WebhookParams = Type.Object(
  { stationId: Type.String({ minLength: 1, maxLength: 80 }), webhookId: Uuid },
  { additionalProperties: false },
);
export type WebhookParams = Static<typeof WebhookParams>;

export const CreateWebhookBody = Type.Object(
  { url: Url, events: Events, description: Type.Optional(Nullable(Description)) },
  { additionalProperties: false },
);
export type CreateWebhookBody = Static<typeof CreateWebhookBody>;

export const PatchWebhookBody = Type.Object(
  {
    url: Type.Optional(Url),
    events: Type.Optional(Events),
    description: Type.Optional(Nullable(Description)),
    active: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false, minProperties: 1 },
);
export type PatchWebhookBody = Static<typeof PatchWebhookBody>;

export const WebhookView = Type.Object({
  id: Uuid,
  url: Type.String(),
  events: Type.Array(Type.String()),
  description: Nullable(Type.String()),
  active: Type.Boolean(),
  createdAt: Timestamp,
});
export type WebhookView = Static<typeof WebhookView>;

export const WebhookWithSecret = Type.Intersect([
  WebhookView,
  Type.Object({ secret: Type.String({ description: '`whsec_` + base64 of 32 random bytes; shown only here' }) }),
]);

export const WebhookList = Type.Object({ webhooks: Type.Array(WebhookView) });

export const RotatedSecret = Type.Object({
  id: Uuid,
  secret: Type.String(),
  previousSecretExpiresAt: Timestamp,
});

export const TestQueued = Type.Object({ eventId: Type.String() });

export const DeliveriesQuery = Type.Object(
  {
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 25 })),
    cursor: Type.Optional(Type.String({ minLength: 1, maxLength: 500 })),
  },
  { additionalProperties: false },
);
export type DeliveriesQuery = Static<typeof DeliveriesQuery>;

export const DELIVERY_STATUSES = ['pending', 'succeeded', 'retrying', 'failed'] as const;

export const Delivery = Type.Object({
  id: Uuid,
  eventId: Type.String(),
  type: Type.String(),
  attempt: Type.Integer({ minimum: 1 }),
  status: StringEnum(DELIVERY_STATUSES),
  httpStatus: Nullable(Type.Integer()),
  durationMs: Nullable(Type.Integer()),
  error: Nullable(Type.String()),
  createdAt: Timestamp,
  nextAttemptAt: Nullable(Timestamp),
});

export const DeliveryList = Type.Object({ deliveries: Type.Array(Delivery), nextCursor: Nullable(Type.String()) });
