// The framework's gates see these types through its registry (http/subjects.ts).
declare module '../../http/subjects.ts' {
  interface RouteSubjects {
    credential: Credential;
    scope: Scope;
  }
}

export const SCOPES = ['listener:read', 'push:register', 'ingest:write', 'inbox:write'] as const;
export type Scope = (typeof SCOPES)[number];

export interface Credential {
  id: string;
  stationId: string;
  label: string | null;
  scopes: Scope[];
  expiresAt: Date;
  revokedAt: Date | null;
}

export interface CredentialRow {
  id: string;
  station_id: string;
  label: string | null;
  token_hash: string;
  scopes: Scope[];
  expires_at: Date;
  revoked_at: Date | null;
  last_used_at: Date | null;
  rotated_at: Date | null;
  created_at: Date;
}

export const credentialFromRow = (row: CredentialRow): Credential => ({
  id: row.id,
  stationId: row.station_id,
  label: row.label,
  scopes: row.scopes,
  expiresAt: row.expires_at,
  revokedAt: row.revoked_at,
});

/** The admin view of a credential: never the secret, never the hash. */
export const presentCredential = (row: CredentialRow) => ({
  id: row.id,
  stationId: row.station_id,
  label: row.label,
  scopes: row.scopes,
  expiresAt: row.expires_at.toISOString(),
  revokedAt: row.revoked_at ? row.revoked_at.toISOString() : null,
  lastUsedAt: row.last_used_at ? row.last_used_at.toISOString() : null,
  createdAt: row.created_at.toISOString(),
});
