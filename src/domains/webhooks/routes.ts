import { adminErrorResponses, adminWrite } from '../../http/responses.ts';
import { defineRoute } from '../../http/route.ts';
import { ErrorBody } from '../../http/schema.ts';
import { ProviderUnavailableError } from '../../lib/errors.ts';
import { StationIdParams } from '../stations/schemas.ts';
import { createWebhook, deleteWebhook, patchWebhook, requireWebhook, rotateWebhookSecret } from './commands.ts';
import { emitWebhookEvent } from './emit.ts';
import { presentWebhook, type WebhookRow } from './model.ts';
import { deliveriesPage } from './queries.ts';
import {
  CreateWebhookBody,
  DeliveriesQuery,
  DeliveryList,
  PatchWebhookBody,
  RotatedSecret,
  TestQueued,
  WebhookList,
  WebhookParams,
  WebhookView,
  WebhookWithSecret,
} from './schemas.ts';

// Admin webhook routes (docs/webhooks.md#registering-operator-token).

const errors = adminErrorResponses('Station or webhook not found.');

export const webhookRoutes = [
  defineRoute({
    ...adminWrite,
    method: 'post',
    path: '/admin/v1/stations/{stationId}/webhooks',
    operationId: 'adminCreateWebhook',
    access: { scope: 'webhooks:write', action: 'webhook.create' },
    summary: 'Register a webhook; its signing secret is returned only here',
    description:
      'At most 20 webhooks a station (409 CONFLICT beyond). `url` must be https:// and not a loopback, private, link-local or unique-local address (checked again at delivery, after DNS resolution).',
    params: StationIdParams,
    body: CreateWebhookBody,
    responses: {
      201: { description: 'The webhook with its secret.', schema: WebhookWithSecret },
      ...errors,
      409: { description: 'The station has 20 webhooks.', schema: ErrorBody },
    },
    async handler({ ctx, svc, params, body }) {
      await svc.stations.require(params.stationId);
      const { row, secret } = await createWebhook(svc, params.stationId, body);
      ctx.status = 201;
      return { ...presentWebhook(row), secret };
    },
  }),
  defineRoute({
    ...adminWrite,
    method: 'get',
    path: '/admin/v1/stations/{stationId}/webhooks',
    operationId: 'adminListWebhooks',
    access: { scope: 'webhooks:write' },
    summary: 'List a station’s webhooks (never their secrets)',
    params: StationIdParams,
    responses: { 200: { description: 'Webhooks, oldest first.', schema: WebhookList }, ...errors },
    async handler({ svc, params }) {
      await svc.stations.require(params.stationId);
      const rows = await svc
        .db<WebhookRow>('webhooks')
        .where({ station_id: params.stationId })
        .orderBy([{ column: 'created_at' }, { column: 'id' }]);
      return { webhooks: rows.map(presentWebhook) };
    },
  }),
  defineRoute({
    ...adminWrite,
    method: 'get',
    path: '/admin/v1/stations/{stationId}/webhooks/{webhookId}',
    operationId: 'adminGetWebhook',
    access: { scope: 'webhooks:write' },
    summary: 'One webhook (without its secret)',
    params: WebhookParams,
    responses: { 200: { description: 'The webhook.', schema: WebhookView }, ...errors },
    async handler({ svc, params }) {
      return presentWebhook(await requireWebhook(svc, params.stationId, params.webhookId));
    },
  }),
  defineRoute({
    ...adminWrite,
    method: 'patch',
    path: '/admin/v1/stations/{stationId}/webhooks/{webhookId}',
    operationId: 'adminPatchWebhook',
    access: { scope: 'webhooks:write', action: 'webhook.update' },
    summary: 'Change a webhook’s url, events, description or active switch',
    description: 'Setting `active: true` again (after an automatic deactivation) starts the failure period over.',
    params: WebhookParams,
    body: PatchWebhookBody,
    responses: { 200: { description: 'The webhook.', schema: WebhookView }, ...errors },
    async handler({ svc, params, body }) {
      return presentWebhook(await patchWebhook(svc, params.stationId, params.webhookId, body));
    },
  }),
  defineRoute({
    ...adminWrite,
    method: 'delete',
    path: '/admin/v1/stations/{stationId}/webhooks/{webhookId}',
    operationId: 'adminDeleteWebhook',
    access: { scope: 'webhooks:write', action: 'webhook.delete' },
    summary: 'Delete a webhook (its pending deliveries are dropped)',
    params: WebhookParams,
    responses: { 204: { description: 'Deleted.' }, ...errors },
    async handler({ ctx, svc, params }) {
      await deleteWebhook(svc, params.stationId, params.webhookId);
      ctx.status = 204;
    },
  }),
  defineRoute({
    ...adminWrite,
    method: 'post',
    path: '/admin/v1/stations/{stationId}/webhooks/{webhookId}/rotate-secret',
    operationId: 'adminRotateWebhookSecret',
    access: { scope: 'webhooks:write', action: 'webhook.rotate-secret' },
    summary: 'Replace the signing secret; the old one keeps signing beside it for 24 h',
    params: WebhookParams,
    responses: { 200: { description: 'The new secret.', schema: RotatedSecret }, ...errors },
    async handler({ svc, params }) {
      const { secret, previousSecretExpiresAt } = await rotateWebhookSecret(svc, params.stationId, params.webhookId);
      return { id: params.webhookId, secret, previousSecretExpiresAt: previousSecretExpiresAt.toISOString() };
    },
  }),
  defineRoute({
    ...adminWrite,
    method: 'post',
    path: '/admin/v1/stations/{stationId}/webhooks/{webhookId}/test',
    operationId: 'adminTestWebhook',
    access: { scope: 'webhooks:write', action: 'webhook.test' },
    summary: 'Queue a `ping` event to this webhook',
    params: WebhookParams,
    responses: {
      202: { description: 'Queued; see the delivery log.', schema: TestQueued },
      ...errors,
      503: { description: 'The queue is unreachable.', schema: ErrorBody },
    },
    async handler({ ctx, svc, params }) {
      const hook = await requireWebhook(svc, params.stationId, params.webhookId);
      const eventId = await emitWebhookEvent(svc, hook.station_id, 'ping', { webhookId: hook.id }, hook.id);
      if (!eventId) throw new ProviderUnavailableError('Could not queue the ping; try again.');
      ctx.status = 202;
      return { eventId };
    },
  }),
  defineRoute({
    ...adminWrite,
    method: 'get',
    path: '/admin/v1/stations/{stationId}/webhooks/{webhookId}/deliveries',
    operationId: 'adminListWebhookDeliveries',
    access: { scope: 'webhooks:write' },
    summary: 'The delivery log of a webhook, newest first (kept 7 days)',
    params: WebhookParams,
    query: DeliveriesQuery,
    responses: { 200: { description: 'A page of delivery attempts.', schema: DeliveryList }, ...errors },
    async handler({ svc, params, query }) {
      await requireWebhook(svc, params.stationId, params.webhookId);
      return deliveriesPage(svc, params.webhookId, query);
    },
  }),
];
