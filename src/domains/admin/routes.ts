import { defineRoute } from '../../http/route.ts';
import { ErrorBody } from '../../http/schema.ts';
import { importBundle } from './import.ts';
import { Bundle, ImportResult } from './schemas.ts';

/** Largest bundle accepted: media travel base64 inside it (each file at most 50 MiB decoded). */
export const MAX_BUNDLE_SIZE = '64mb';

export const adminRoutes = [
  defineRoute({
    method: 'post',
    path: '/admin/v1/import',
    operationId: 'adminImportBundle',
    access: { scope: 'root', action: 'station.import' },
    summary: 'Create a station with its credentials, content types, media, records and schedule from one bundle',
    description:
      'All or nothing: one transaction. Errors name the bundle path (e.g. `records.3.values.title`). A bundle for a slug or id that exists is 409 (there is no upsert). The created credentials’ secrets are in the response, shown once. Bundle format: docs/demo.md.',
    tags: ['admin'],
    surface: 'admin',
    body: Bundle,
    bodyLimit: MAX_BUNDLE_SIZE,
    responses: {
      201: { description: 'The created station, credentials (with secrets), types, media, records and schedule.', schema: ImportResult },
      400: { description: 'Invalid bundle (VALIDATION_ERROR; issues name bundle paths). Nothing was written.', schema: ErrorBody },
      401: { description: 'Missing or invalid operator token.', schema: ErrorBody },
      409: {
        description: 'The station slug or id, or a record, presenter, program or broadcast id, is taken (CONFLICT). Nothing was written.',
        schema: ErrorBody,
      },
      413: { description: 'The bundle is larger than 64 MiB.', schema: ErrorBody },
    },
    async handler({ ctx, svc, body }) {
      const result = await importBundle(svc, body);
      ctx.status = 201;
      return result;
    },
  }),
];
