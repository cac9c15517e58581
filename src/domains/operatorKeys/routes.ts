import { adminErrorResponses } from '../../http/responses.ts';
import { defineRoute } from '../../http/route.ts';
import { ErrorBody, Type } from '../../http/schema.ts';
import { createOperatorKey, deleteOperatorKey, liveOperatorKey, rotateOperatorKey } from './commands.ts';
import { presentOperatorKey, type OperatorKeyRow } from './model.ts';
import { CreatedOperatorKey, CreateOperatorKeyBody, OperatorKeyParams, OperatorKeyView } from './schemas.ts';

// Operator keys (docs/operations.md#operator-keys-and-the-audit-log): managed with the root key alone.

const errors = adminErrorResponses('Operator key not found.', {
  403: { description: 'An operator key: only the root key manages keys (FORBIDDEN).', schema: ErrorBody },
});

const created = (row: OperatorKeyRow, key: string) => {
  const { lastUsedAt: _lastUsed, rotatedAt: _rotated, ...view } = presentOperatorKey(row);
  return { ...view, key };
};

const keyRoute = { tags: ['admin'], surface: 'admin' as const };

export const operatorKeyRoutes = [
  defineRoute({
    ...keyRoute,
    method: 'post',
    path: '/admin/v1/operator-keys',
    operationId: 'adminCreateOperatorKey',
    summary: 'Create an operator key (root key only); the key is shown once',
    access: { scope: 'root', action: 'operator-key.create' },
    body: CreateOperatorKeyBody,
    responses: { 201: { description: 'The key with its secret.', schema: CreatedOperatorKey }, ...errors },
    async handler({ ctx, svc, body }) {
      const { row, key } = await createOperatorKey(svc.db, { ...body, now: svc.clock.now() });
      ctx.status = 201;
      return created(row, key);
    },
  }),
  defineRoute({
    ...keyRoute,
    method: 'get',
    path: '/admin/v1/operator-keys',
    operationId: 'adminListOperatorKeys',
    summary: 'List operator keys (root key only; never their secrets)',
    access: { scope: 'root' },
    responses: { 200: { description: 'Keys.', schema: Type.Object({ keys: Type.Array(OperatorKeyView) }) }, ...errors },
    async handler({ svc }) {
      const rows = await svc
        .db<OperatorKeyRow>('operator_keys')
        .whereNull('revoked_at')
        .orderBy([{ column: 'created_at' }, { column: 'id' }]);
      return { keys: rows.map(presentOperatorKey) };
    },
  }),
  defineRoute({
    ...keyRoute,
    method: 'get',
    path: '/admin/v1/operator-keys/{keyId}',
    operationId: 'adminGetOperatorKey',
    summary: 'One operator key (root key only)',
    access: { scope: 'root' },
    params: OperatorKeyParams,
    responses: { 200: { description: 'The key.', schema: OperatorKeyView }, ...errors },
    async handler({ svc, params }) {
      return presentOperatorKey(await liveOperatorKey(svc.db, params.keyId));
    },
  }),
  defineRoute({
    ...keyRoute,
    method: 'post',
    path: '/admin/v1/operator-keys/{keyId}/rotate',
    operationId: 'adminRotateOperatorKey',
    summary: 'Replace an operator key’s secret (root key only); the old one stops at once',
    access: { scope: 'root', action: 'operator-key.rotate' },
    params: OperatorKeyParams,
    responses: { 201: { description: 'The key with its new secret.', schema: CreatedOperatorKey }, ...errors },
    async handler({ ctx, svc, params }) {
      const { row, key, oldHash } = await rotateOperatorKey(svc.db, params.keyId, svc.clock.now());
      await svc.invalidation.invalidate('operator-key', oldHash);
      ctx.status = 201;
      return created(row, key);
    },
  }),
  defineRoute({
    ...keyRoute,
    method: 'delete',
    path: '/admin/v1/operator-keys/{keyId}',
    operationId: 'adminDeleteOperatorKey',
    summary: 'Delete an operator key (root key only); it stops at once',
    access: { scope: 'root', action: 'operator-key.delete' },
    params: OperatorKeyParams,
    responses: { 204: { description: 'Deleted.' }, ...errors },
    async handler({ ctx, svc, params }) {
      const hash = await deleteOperatorKey(svc.db, params.keyId, svc.clock.now());
      await svc.invalidation.invalidate('operator-key', hash);
      ctx.status = 204;
    },
  }),
];
