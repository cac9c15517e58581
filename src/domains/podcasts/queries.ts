import type { Db } from '../../lib/db.ts';
import { PUBLIC_FILE_COLUMNS, type PublicFile } from '../media/queries.ts';
import type { MediaStoreName } from '../media/store.ts';
import type { RecordDocument, Values } from '../content/model.ts';
import { MAX_ITEMS } from './model.ts';

// Reads behind the feeds: the episodes (published records of the episode type whose `audio` value is an
// audio version of the station), the program of a program feed, and the cover's bytes.

export interface EpisodeRow {
  record_id: string;
  first_published_at: Date;
  values: Values;
  document: RecordDocument | null;
  audio_id: string;
  audio_mime: string;
  audio_size: string | number;
  audio_duration: number | null;
  /** Where the audio's bytes are (null: in its row); the enclosure points at its public URL when there is one. */
  audio_store: MediaStoreName | null;
  audio_object_key: string | null;
  image_id: string | null;
  image_mime: string | null;
  image_width: number | null;
  image_height: number | null;
}

/** A media field's version id in delivered values (the first of a repeated field), as uuid; null otherwise. */
const versionOf = (field: string) =>
  `(SELECT CASE WHEN v ~ '^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$' THEN v::uuid END
      FROM (SELECT CASE jsonb_typeof(pr.delivered_values->'${field}') WHEN 'array' THEN pr.delivered_values->'${field}'->>0
                   ELSE pr.delivered_values->>'${field}' END AS v) AS f)`;

/** The newest episodes by first publication (at most MAX_ITEMS); of one program when `programId` is set. */
export async function findEpisodes(db: Db, stationId: string, type: string, programId: string | null): Promise<EpisodeRow[]> {
  const byProgram = programId === null ? '' : `AND pr.body->'related'->'programIds' @> :programIds::jsonb`;
  const result = await db.raw<{ rows: EpisodeRow[] }>(
    `SELECT pr.record_id, pr.first_published_at, pr.delivered_values AS values, pr.body->'document' AS document,
            a.id AS audio_id, a.mime AS audio_mime, a.size AS audio_size, a.duration AS audio_duration,
            af.store AS audio_store, af.object_key AS audio_object_key,
            i.id AS image_id, i.mime AS image_mime, i.width AS image_width, i.height AS image_height
       FROM published_records pr
       JOIN media_versions a ON a.id = ${versionOf('audio')} AND a.station_id = pr.station_id AND a.kind = 'audio'
       LEFT JOIN media_files af ON af.version_id = a.id AND af.variant = 'original'
       LEFT JOIN media_versions i ON i.id = ${versionOf('image')} AND i.station_id = pr.station_id AND i.kind = 'image'
      WHERE pr.station_id = :stationId AND pr.type = :type ${byProgram}
      ORDER BY pr.first_published_at DESC, pr.record_id DESC
      LIMIT :limit`,
    { stationId, type, limit: MAX_ITEMS, ...(programId === null ? {} : { programIds: JSON.stringify([programId]) }) },
  );
  return result.rows;
}

/**
 * The last change of the station's episodes: the latest `updated_at` of its records of the type that were
 * ever published (an unpublish moves it too). With the station's and the program's own, it is the feed's
 * `lastBuildDate`, so the same data gives the same bytes (and ETag) in every process.
 */
export async function lastEpisodeChange(db: Db, stationId: string, type: string): Promise<Date | null> {
  const row = await db('records')
    .where({ station_id: stationId, type })
    .whereNotNull('first_published_at')
    .first<{ last: Date | null } | undefined>(db.raw('max(updated_at) AS last'));
  return row?.last ? new Date(row.last) : null;
}

export interface ProgramRow {
  id: string;
  title: string;
  description: string | null;
  updated_at: Date;
}

export async function findProgram(db: Db, stationId: string, programId: string): Promise<ProgramRow | null> {
  const row = await db('programs')
    .where({ id: programId, station_id: stationId })
    .first<ProgramRow | undefined>('id', 'title', 'description', 'updated_at');
  return row ?? null;
}

/** The cover's original file (whether or not a published record references it). */
export async function findArtworkFile(db: Db, stationId: string, versionId: string, inlineUpTo: number): Promise<PublicFile | null> {
  const result = await db.raw<{ rows: PublicFile[] }>(
    `SELECT ${PUBLIC_FILE_COLUMNS}
       FROM media_files f JOIN media_versions v ON v.id = f.version_id
      WHERE f.version_id = :versionId AND f.variant = 'original' AND v.station_id = :stationId`,
    { inlineUpTo, versionId, stationId },
  );
  return result.rows[0] ?? null;
}
