import type { OperatorScope } from '../../lib/operatorScopes.ts';

// The framework's admin gate sees operator keys through its registry (http/subjects.ts).
declare module '../../http/subjects.ts' {
  interface RouteSubjects {
    operatorKey: OperatorKey;
  }
}

/** What the admin gate needs of a key (cached by its hash; never the secret). */
export interface OperatorKey {
  id: string;
  label: string;
  /** `"*"`: every station, present and future. */
  stations: string[] | '*';
  scopes: OperatorScope[];
  expiresAt: Date;
  revokedAt: Date | null;
}

export interface OperatorKeyRow {
  id: string;
  label: string;
  key_hash: string;
  all_stations: boolean;
  station_ids: string[];
  scopes: OperatorScope[];
  expires_at: Date;
  revoked_at: Date | null;
  rotated_at: Date | null;
  last_used_at: Date | null;
  created_at: Date;
}

export const operatorKeyFromRow = (row: OperatorKeyRow): OperatorKey => ({
  id: row.id,
  label: row.label,
  stations: row.all_stations ? '*' : row.station_ids,
  scopes: row.scopes,
  expiresAt: row.expires_at,
  revokedAt: row.revoked_at,
});

/** The admin view of a key: never the secret, never its hash. */
export const presentOperatorKey = (row: OperatorKeyRow) => ({
  id: row.id,
  label: row.label,
  stations: row.all_stations ? ('*' as const) : row.station_ids,
  scopes: row.scopes,
  expiresAt: row.expires_at.toISOString(),
  lastUsedAt: row.last_used_at ? row.last_used_at.toISOString() : null,
  rotatedAt: row.rotated_at ? row.rotated_at.toISOString() : null,
  createdAt: row.created_at.toISOString(),
});
