import { adminErrorResponses, adminWrite } from '../../../http/responses.ts';
import { defineRoute } from '../../../http/route.ts';
import { ErrorBody } from '../../../http/schema.ts';
import { NotFoundError } from '../../../lib/errors.ts';
import { StationIdParams } from '../../stations/schemas.ts';
import { PushCredentialsView, PutPushCredentialsBody } from './schemas.ts';
import { deleteCredentials, findCredentialsRow, presentCredentials, saveCredentials } from './credentials.ts';

// The admin routes of a station's push provider credentials (docs/push.md#credentials).

const CREDENTIALS = '/admin/v1/stations/{stationId}/push/credentials';
/** The 404 text every admin push route shares (push/notifications/routes.ts). */
const errors = adminErrorResponses('Station (or notification, or credentials) not found.');

export const pushCredentialRoutes = [
  defineRoute({
    ...adminWrite,
    method: 'put',
    path: CREDENTIALS,
    operationId: 'adminPutPushCredentials',
    access: { scope: 'push:credentials', action: 'push.credentials-save' },
    summary: 'Store the station’s push provider credentials (encrypted; the secret parts are never returned)',
    description:
      'fcm: `serviceAccount` (the service-account JSON Google issues); apns: `keyId`, `teamId`, `bundleId`, `privateKey` (.p8 PEM), `environment`; expo: `accessToken?`. The answer shows only the non-secret parts.',
    params: StationIdParams,
    body: PutPushCredentialsBody,
    responses: {
      200: { description: 'Stored.', schema: PushCredentialsView },
      ...errors,
      409: { description: 'PROVIDER_MISMATCH: not the station’s push.provider.', schema: ErrorBody },
    },
    async handler({ svc, params, body }) {
      const station = await svc.stations.require(params.stationId);
      return saveCredentials(svc.db, svc.config.secret, { station, body, now: svc.clock.now() });
    },
  }),
  defineRoute({
    ...adminWrite,
    method: 'get',
    path: CREDENTIALS,
    operationId: 'adminGetPushCredentials',
    access: { scope: 'push:credentials' },
    summary: 'The non-secret parts of the stored push credentials',
    params: StationIdParams,
    responses: { 200: { description: 'Stored credentials.', schema: PushCredentialsView }, ...errors },
    async handler({ svc, params }) {
      const station = await svc.stations.require(params.stationId);
      const row = await findCredentialsRow(svc.db, station.id);
      if (!row) throw new NotFoundError('No push credentials are stored for this station.');
      return presentCredentials(row);
    },
  }),
  defineRoute({
    ...adminWrite,
    method: 'delete',
    path: CREDENTIALS,
    operationId: 'adminDeletePushCredentials',
    access: { scope: 'push:credentials', action: 'push.credentials-delete' },
    summary: 'Remove the stored push credentials',
    params: StationIdParams,
    responses: { 204: { description: 'Removed (also when there were none).' }, ...errors },
    async handler({ ctx, svc, params }) {
      const station = await svc.stations.require(params.stationId);
      await deleteCredentials(svc.db, station.id);
      ctx.status = 204;
    },
  }),
];
