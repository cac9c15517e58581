import { adminErrorResponses } from '../../http/responses.ts';
import { defineRoute } from '../../http/route.ts';
import { Type } from '../../http/schema.ts';
import { StationIdParams } from '../stations/schemas.ts';
import { createCredential, revokeCredential, rotateCredential } from './commands.ts';
import { presentCredential, type CredentialRow } from './model.ts';
import { CreateCredentialBody, CreatedCredential, CredentialParams, CredentialView } from './schemas.ts';

const adminErrors = adminErrorResponses('Station or credential not found.');

const created = (row: CredentialRow, token: string) => ({
  id: row.id,
  token,
  scopes: row.scopes,
  expiresAt: row.expires_at.toISOString(),
  label: row.label,
});

export const credentialRoutes = [
  defineRoute({
    method: 'post',
    path: '/admin/v1/stations/{stationId}/credentials',
    operationId: 'adminCreateCredential',
    access: { scope: 'credentials:write', action: 'credential.create' },
    summary: 'Create a station credential; the secret is returned once',
    tags: ['admin'],
    surface: 'admin',
    params: StationIdParams,
    body: CreateCredentialBody,
    responses: { 201: { description: 'The credential with its secret.', schema: CreatedCredential }, ...adminErrors },
    async handler({ ctx, svc, params, body }) {
      const station = await svc.stations.require(params.stationId);
      const { row, token } = await createCredential(svc.db, {
        stationId: station.id,
        scopes: body.scopes,
        label: body.label,
        expiresAt: body.expiresAt,
        now: svc.clock.now(),
      });
      ctx.status = 201;
      return created(row, token);
    },
  }),
  defineRoute({
    method: 'get',
    path: '/admin/v1/stations/{stationId}/credentials',
    operationId: 'adminListCredentials',
    access: { scope: 'credentials:write' },
    summary: 'List a station’s credentials (never their secrets)',
    tags: ['admin'],
    surface: 'admin',
    params: StationIdParams,
    responses: { 200: { description: 'Credentials.', schema: Type.Object({ credentials: Type.Array(CredentialView) }) }, ...adminErrors },
    async handler({ svc, params }) {
      const rows = await svc.db<CredentialRow>('credentials').where({ station_id: params.stationId }).orderBy('created_at');
      return { credentials: rows.map(presentCredential) };
    },
  }),
  defineRoute({
    method: 'post',
    path: '/admin/v1/stations/{stationId}/credentials/{credentialId}/rotate',
    operationId: 'adminRotateCredential',
    access: { scope: 'credentials:write', action: 'credential.rotate' },
    summary: 'Replace a credential’s secret; the old one stops working at once',
    tags: ['admin'],
    surface: 'admin',
    params: CredentialParams,
    responses: { 201: { description: 'The credential with its new secret.', schema: CreatedCredential }, ...adminErrors },
    async handler({ ctx, svc, params }) {
      const { row, token, oldHash } = await rotateCredential(svc.db, params.stationId, params.credentialId, svc.clock.now());
      await svc.invalidation.invalidate('credential', oldHash);
      ctx.status = 201;
      return created(row, token);
    },
  }),
  defineRoute({
    method: 'delete',
    path: '/admin/v1/stations/{stationId}/credentials/{credentialId}',
    operationId: 'adminRevokeCredential',
    access: { scope: 'credentials:write', action: 'credential.revoke' },
    summary: 'Revoke a credential',
    tags: ['admin'],
    surface: 'admin',
    params: CredentialParams,
    responses: { 204: { description: 'Revoked.' }, ...adminErrors },
    async handler({ ctx, svc, params }) {
      const hash = await revokeCredential(svc.db, params.stationId, params.credentialId, svc.clock.now());
      await svc.invalidation.invalidate('credential', hash);
      ctx.status = 204;
    },
  }),
];
