import type { Db } from '../../lib/db.ts';
import { NotFoundError, ValidationError } from '../../lib/errors.ts';
import { newId } from '../../lib/ids.ts';
import type { OperatorScope } from '../../lib/operatorScopes.ts';
import { generateOperatorKey, hashToken } from '../../lib/tokens.ts';
import type { OperatorKeyRow } from './model.ts';

export interface CreateOperatorKeyInput {
  label: string;
  stations: string[] | '*';
  scopes: OperatorScope[];
  expiresAt?: string;
  now: Date;
}

function expiryFrom(now: Date, requested?: string): Date {
  const twoYears = new Date(now);
  twoYears.setUTCFullYear(twoYears.getUTCFullYear() + 2);
  if (requested === undefined) return twoYears;
  const at = new Date(requested);
  if (Number.isNaN(at.getTime()) || at.getTime() <= now.getTime() || at > twoYears) {
    throw new ValidationError('Invalid expiresAt.', [
      {
        path: 'expiresAt',
        code: 'out_of_range',
        message: 'expiresAt must be an ISO 8601 timestamp in the future, at most two years ahead',
      },
    ]);
  }
  return at;
}

/** Every named station must exist (a key for a mistyped id would silently reach nothing). */
async function checkStations(db: Db, stations: string[] | '*'): Promise<void> {
  if (stations === '*') return;
  const found = new Set((await db('stations').whereIn('id', stations).select('id')).map((row: { id: string }) => row.id));
  const unknown = stations.filter((id) => !found.has(id));
  if (unknown.length > 0) {
    throw new ValidationError('Unknown stations.', [
      { path: 'stations', code: 'unknown_station', message: `no station with id ${unknown.map((id) => JSON.stringify(id)).join(', ')}` },
    ]);
  }
}

/** Creates a key and returns its secret (shown once; only its SHA-256 hash is stored). */
export async function createOperatorKey(db: Db, input: CreateOperatorKeyInput): Promise<{ row: OperatorKeyRow; key: string }> {
  const key = generateOperatorKey();
  return db.transaction(async (trx) => {
    await checkStations(trx, input.stations);
    const [row] = await trx<OperatorKeyRow>('operator_keys')
      .insert({
        id: newId(),
        label: input.label,
        key_hash: hashToken(key),
        all_stations: input.stations === '*',
        station_ids: input.stations === '*' ? [] : input.stations,
        scopes: input.scopes,
        expires_at: expiryFrom(input.now, input.expiresAt),
        created_at: input.now,
      })
      .returning('*');
    return { row: row as OperatorKeyRow, key };
  });
}

/** A key's row, unless it was deleted (a deleted key is gone for the API; its row stays for the audit log). */
export async function liveOperatorKey(db: Db, id: string): Promise<OperatorKeyRow> {
  const row = await db<OperatorKeyRow>('operator_keys').where({ id }).whereNull('revoked_at').first();
  if (!row) throw new NotFoundError('Operator key not found.');
  return row;
}

/** A new secret; the old one stops at once. Returns the old hash, for the caches. */
export async function rotateOperatorKey(db: Db, id: string, now: Date): Promise<{ row: OperatorKeyRow; key: string; oldHash: string }> {
  return db.transaction(async (trx) => {
    const current = await trx<OperatorKeyRow>('operator_keys').where({ id }).whereNull('revoked_at').forUpdate().first();
    if (!current) throw new NotFoundError('Operator key not found.');
    const key = generateOperatorKey();
    const [row] = await trx<OperatorKeyRow>('operator_keys')
      .where({ id })
      .update({ key_hash: hashToken(key), rotated_at: now })
      .returning('*');
    return { row: row as OperatorKeyRow, key, oldHash: current.key_hash };
  });
}

/** Deletes (revokes) a key; returns its hash, for the caches. */
export async function deleteOperatorKey(db: Db, id: string, now: Date): Promise<string> {
  return db.transaction(async (trx) => {
    const [row] = await trx<OperatorKeyRow>('operator_keys')
      .where({ id })
      .whereNull('revoked_at')
      .update({ revoked_at: now })
      .returning('*');
    if (!row) throw new NotFoundError('Operator key not found.');
    return (row as OperatorKeyRow).key_hash;
  });
}
