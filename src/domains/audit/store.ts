import type { AuditEntry } from '../../http/subjects.ts';
import type { Db, Trx } from '../../lib/db.ts';

/** How long entries are kept (400 days: docs/operations.md#the-audit-log). */
export const AUDIT_RETENTION_DAYS = 400;

export interface AuditRow {
  id: string;
  created_at: Date;
  key_id: string;
  key_label: string;
  method: string;
  path: string;
  station_id: string | null;
  action: string;
  target: string | null;
  status: number;
  request_id: string;
  client_ip: string;
}

/**
 * The audit log's storage: one INSERT per entry, in the change's transaction when given. Recording an
 * entry whose id is stored already replaces its status (http/audit.ts: the answered status, known only
 * after the change's transaction committed).
 */
export class AuditLog {
  private readonly db: Db;
  constructor(db: Db) {
    this.db = db;
  }

  async record(trx: Trx | null, entry: AuditEntry): Promise<void> {
    await (trx ?? this.db)<AuditRow>('audit_log')
      .insert({
        id: entry.id,
        created_at: entry.at,
        key_id: entry.keyId,
        key_label: entry.keyLabel,
        method: entry.method,
        path: entry.path,
        station_id: entry.stationId,
        action: entry.action,
        target: entry.target,
        status: entry.status,
        request_id: entry.requestId,
        client_ip: entry.clientIp,
      })
      .onConflict('id')
      .merge(['status']);
  }
}

/** Drops entries older than the retention (the worker's daily `audit.prune`); returns how many. */
export async function pruneAuditLog(db: Db, now: Date): Promise<number> {
  const before = new Date(now.getTime() - AUDIT_RETENTION_DAYS * 24 * 3600 * 1000);
  return db('audit_log').where('created_at', '<', before).delete();
}

export const presentAuditEntry = (row: AuditRow) => ({
  id: row.id,
  at: row.created_at.toISOString(),
  keyId: row.key_id,
  keyLabel: row.key_label,
  method: row.method,
  path: row.path,
  stationId: row.station_id,
  action: row.action,
  target: row.target,
  status: row.status,
  requestId: row.request_id,
  clientIp: row.client_ip,
});
