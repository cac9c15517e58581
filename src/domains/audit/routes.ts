import type { Static } from '@sinclair/typebox';
import { adminErrorResponses } from '../../http/responses.ts';
import { defineRoute } from '../../http/route.ts';
import { ErrorBody } from '../../http/schema.ts';
import type { Db } from '../../lib/db.ts';
import { keysetPage } from '../../lib/keysetCursor.ts';
import { StationIdParams } from '../stations/schemas.ts';
import { AuditPage, AuditQuery } from './schemas.ts';
import { presentAuditEntry, type AuditRow } from './store.ts';

type Filters = Static<typeof AuditQuery>;

/** One newest-first page of entries (every station's and the key operations when `stationId` is null). */
async function auditPage(db: Db, secret: string, stationId: string | null, query: Filters) {
  const rows = db<AuditRow>('audit_log').select('*');
  if (stationId !== null) rows.where({ station_id: stationId });
  if (query.from) rows.where('created_at', '>=', new Date(query.from));
  if (query.to) rows.where('created_at', '<', new Date(query.to));
  if (query.action) rows.where({ action: query.action });
  if (query.keyId) rows.where({ key_id: query.keyId });
  // A cursor holds its list and filters: passed with others it is a 400, never another list's page.
  const bind = { s: stationId ?? '*', from: query.from ?? '', to: query.to ?? '', action: query.action ?? '', key: query.keyId ?? '' };
  const { page, nextCursor } = await keysetPage<AuditRow>(rows, secret, bind, 'this audit list with the same filters', {
    limit: query.limit ?? 50,
    cursor: query.cursor,
  });
  return { entries: page.map(presentAuditEntry), nextCursor };
}

const description =
  'Newest first; `from`/`to` bound `[from, to)`; filters combine; `limit` 1–100 (default 50); `nextCursor` (signed) continues the same list.';
const forbidden = { 403: { description: 'The key lacks the scope this needs (FORBIDDEN names it).', schema: ErrorBody } };

export const auditRoutes = [
  defineRoute({
    method: 'get',
    path: '/admin/v1/stations/{stationId}/audit',
    operationId: 'adminStationAudit',
    summary: 'A station’s audit log: every admin write on it',
    description,
    tags: ['admin'],
    surface: 'admin',
    access: { scope: 'audit:read' },
    params: StationIdParams,
    query: AuditQuery,
    responses: { 200: { description: 'A page of entries.', schema: AuditPage }, ...adminErrorResponses('Station not found.', forbidden) },
    async handler({ svc, params, query }) {
      const station = await svc.stations.require(params.stationId);
      return auditPage(svc.db, svc.config.secret, station.id, query);
    },
  }),
  defineRoute({
    method: 'get',
    path: '/admin/v1/audit',
    operationId: 'adminAudit',
    summary: 'The whole audit log (root key only): every station and the operator-key operations',
    description,
    tags: ['admin'],
    surface: 'admin',
    access: { scope: 'root' },
    query: AuditQuery,
    responses: { 200: { description: 'A page of entries.', schema: AuditPage }, ...adminErrorResponses('Not found.', forbidden) },
    async handler({ svc, query }) {
      return auditPage(svc.db, svc.config.secret, null, query);
    },
  }),
];
