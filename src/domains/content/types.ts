import type { Db } from '../../lib/db.ts';
import { ValidationError } from '../../lib/errors.ts';
import { normaliseFields, sameFields } from './fields.ts';
import type { ContentTypeRow, ContentTypeVersionRow, FieldDefinition } from './model.ts';
import type { PutContentTypeBody } from './schemas.ts';

// Content type definitions: the admin command that versions them and the reads both sides need.

/** The schemas response holds at most this many types (ordered by key). */
export const MAX_TYPES_PER_RESPONSE = 100;

export interface TypeVersion {
  key: string;
  label: string;
  version: number;
  archived: boolean;
  fields: FieldDefinition[];
}

/**
 * Creates or updates a type. A changed field list (anything in a definition, flags included) makes a
 * new version; a label or `archived` change alone keeps the version. Returns the current version.
 */
export async function saveContentType(
  db: Db,
  input: { stationId: string; key: string; body: PutContentTypeBody; now: Date },
): Promise<{ key: string; version: number }> {
  const { fields, issues } = normaliseFields(input.body.fields);
  if (issues.length > 0) throw new ValidationError('Invalid field definitions.', issues);
  const { stationId, key, body, now } = input;
  const fieldsJson = JSON.stringify(fields);
  return db.transaction(async (trx) => {
    const inserted = await trx<ContentTypeRow>('content_types')
      .insert({
        station_id: stationId,
        key,
        label: body.label,
        current_version: 1,
        archived: body.archived ?? false,
        created_at: now,
        updated_at: now,
      })
      .onConflict(['station_id', 'key'])
      .ignore()
      .returning('*');
    if (inserted.length > 0) {
      await trx('content_type_versions').insert({
        station_id: stationId,
        key,
        version: 1,
        label: body.label,
        fields: fieldsJson,
        created_at: now,
      });
      return { key, version: 1 };
    }
    const current = (await trx<ContentTypeRow>('content_types')
      .where({ station_id: stationId, key })
      .forUpdate()
      .first()) as ContentTypeRow;
    const latest = (await trx<ContentTypeVersionRow>('content_type_versions')
      .where({ station_id: stationId, key, version: current.current_version })
      .first()) as ContentTypeVersionRow;
    let version = current.current_version;
    if (!sameFields(latest.fields, fields)) {
      version += 1;
      await trx('content_type_versions').insert({
        station_id: stationId,
        key,
        version,
        label: body.label,
        fields: fieldsJson,
        created_at: now,
      });
    } else if (latest.label !== body.label) {
      await trx('content_type_versions').where({ station_id: stationId, key, version }).update({ label: body.label });
    }
    await trx('content_types')
      .where({ station_id: stationId, key })
      .update({ label: body.label, current_version: version, archived: body.archived ?? current.archived, updated_at: now });
    return { key, version };
  });
}

const versionColumns = ['t.key', 'v.label', 'v.version', 't.archived', 'v.fields'];

function joinVersions(db: Db) {
  return db('content_types as t').join('content_type_versions as v', function on() {
    this.on('v.station_id', 't.station_id').andOn('v.key', 't.key');
  });
}

/**
 * Every current type of a station, ordered by key (at most 100). By code point (`COLLATE "C"`), not the
 * database's collation, so every deployment lists — and cuts at 100 — the same types in the same order.
 */
export async function listCurrentTypes(db: Db, stationId: string): Promise<TypeVersion[]> {
  return joinVersions(db)
    .select(versionColumns)
    .where('t.station_id', stationId)
    .andWhereRaw('v.version = t.current_version')
    .orderByRaw('t.key COLLATE "C"')
    .limit(MAX_TYPES_PER_RESPONSE);
}

/** Versions are stored as Postgres `integer`; a larger one asked for cannot exist. */
const MAX_STORED_VERSION = 2_147_483_647;

/**
 * One type at the requested version (the current one when omitted). A historical version is only
 * delivered once a record was published with it; otherwise null, like an unknown type.
 */
export async function findTypeVersion(db: Db, stationId: string, key: string, version?: number): Promise<TypeVersion | null> {
  if (version !== undefined && version > MAX_STORED_VERSION) return null;
  const query = joinVersions(db).select(versionColumns).where({ 't.station_id': stationId, 't.key': key });
  if (version === undefined) query.andWhereRaw('v.version = t.current_version');
  else query.andWhere('v.version', version).andWhere((q) => q.whereRaw('v.version = t.current_version').orWhereNotNull('v.published_at'));
  return ((await query.first()) as TypeVersion | undefined) ?? null;
}

export async function typeKeys(db: Db, stationId: string): Promise<string[]> {
  return (await db('content_types').where({ station_id: stationId }).orderByRaw('key COLLATE "C"').pluck('key')) as string[];
}
