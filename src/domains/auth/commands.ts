import type { Knex } from 'knex';
import { NotFoundError, ValidationError } from '../../lib/errors.ts';
import { newId } from '../../lib/ids.ts';
import { generateToken, hashToken } from '../../lib/tokens.ts';
import type { CredentialRow, Scope } from './model.ts';

const YEAR_MS = 366 * 24 * 3600 * 1000; // "within one year": leap years included

export interface CreateCredentialInput {
  stationId: string;
  scopes: Scope[];
  label?: string | null;
  expiresAt?: string;
  now: Date;
}

function expiryFrom(now: Date, requested?: string): Date {
  const oneYear = new Date(now);
  oneYear.setUTCFullYear(oneYear.getUTCFullYear() + 1);
  if (requested === undefined) return oneYear;
  const at = new Date(requested);
  if (Number.isNaN(at.getTime())) {
    throw new ValidationError('Invalid expiresAt.', [
      { path: 'expiresAt', code: 'invalid_format', message: 'expiresAt must be an ISO 8601 timestamp' },
    ]);
  }
  if (at.getTime() <= now.getTime() || at.getTime() - now.getTime() > YEAR_MS || at > oneYear) {
    throw new ValidationError('Invalid expiresAt.', [
      { path: 'expiresAt', code: 'out_of_range', message: 'expiresAt must be in the future and at most one year ahead' },
    ]);
  }
  return at;
}

/** Creates a credential and returns the raw secret (shown once; only its hash is stored). */
export async function createCredential(db: Knex, input: CreateCredentialInput): Promise<{ row: CredentialRow; token: string }> {
  const token = generateToken();
  // A transaction of one statement: the admin audit entry joins it (http/audit.ts).
  const [row] = await db.transaction((trx) =>
    trx<CredentialRow>('credentials').insert(
      {
        id: newId(),
        station_id: input.stationId,
        label: input.label ?? null,
        token_hash: hashToken(token),
        scopes: [...new Set(input.scopes)],
        expires_at: expiryFrom(input.now, input.expiresAt),
        created_at: input.now,
      },
      '*',
    ),
  );
  return { row: row as CredentialRow, token };
}

/** Replaces the secret; the old token stops working. Returns the old hash so caches can drop it. */
export async function rotateCredential(
  db: Knex,
  stationId: string,
  id: string,
  now: Date,
): Promise<{ row: CredentialRow; token: string; oldHash: string }> {
  return db.transaction(async (trx) => {
    const current = await trx<CredentialRow>('credentials').where({ id, station_id: stationId }).forUpdate().first();
    if (!current || current.revoked_at) throw new NotFoundError('Credential not found.');
    const token = generateToken();
    const [row] = await trx<CredentialRow>('credentials')
      .where({ id })
      .update({ token_hash: hashToken(token), rotated_at: now })
      .returning('*');
    return { row: row as CredentialRow, token, oldHash: current.token_hash };
  });
}

export async function revokeCredential(db: Knex, stationId: string, id: string, now: Date): Promise<string> {
  const [row] = await db.transaction((trx) =>
    trx<CredentialRow>('credentials')
      .where({ id, station_id: stationId })
      .update({ revoked_at: trx.raw('coalesce(revoked_at, ?)', [now]) as unknown as Date })
      .returning('*'),
  );
  if (!row) throw new NotFoundError('Credential not found.');
  return (row as CredentialRow).token_hash;
}
