import type { TSchema } from '@sinclair/typebox';
import type { Db } from '../../lib/db.ts';

// The seam through which a feature adds columns to the play log (docs/now-playing.md, "Play log"): the
// track core writes the log and knows no feature; a feature registers its columns, their schema in the
// JSON answer and how to read their values for a batch of plays, from a file in its own folder
// (the listener inbox's likes and dislikes: inbox/station.ts), listed in src/features.ts.

export type PlayValue = string | number | null;

export interface PlayColumnsSpec {
  /** Column names, in order, after the core's columns; each appears in JSON and CSV. */
  columns: readonly string[];
  /** Each column's schema in the JSON answer (OpenAPI). */
  schema: Readonly<Record<string, TSchema>>;
  /** The columns' values of a play the batch read left out. */
  empty: Readonly<Record<string, PlayValue>>;
  /** The columns' values of a batch of plays (observation ids) of one station, by play id. */
  values(db: Db, stationId: string, playIds: readonly string[]): Promise<Map<string, Record<string, PlayValue>>>;
}

const registered: PlayColumnsSpec[] = [];
let read = false;

/** Adds a feature's play-log columns; registered before the play-log route is built (src/features.ts). */
export function registerPlayColumns(spec: PlayColumnsSpec): void {
  if (read)
    throw new Error(
      `play-log columns ${spec.columns.join(', ')} registered after the play log was built: import them from src/features.ts`,
    );
  const taken = new Set(registered.flatMap((s) => s.columns));
  for (const column of spec.columns) if (taken.has(column)) throw new Error(`play-log column "${column}" registered twice`);
  registered.push(spec);
}

/** The registered column sets, in registration order. Reading them closes the registry. */
export function playColumns(): readonly PlayColumnsSpec[] {
  read = true;
  return registered;
}

/** The registered columns' values of a batch of plays, every column present for every play. */
export async function featureValues(
  db: Db,
  stationId: string,
  playIds: readonly string[],
): Promise<Map<string, Record<string, PlayValue>>> {
  const out = new Map<string, Record<string, PlayValue>>(playIds.map((id) => [id, {}]));
  for (const spec of playColumns()) {
    const values = playIds.length ? await spec.values(db, stationId, playIds) : new Map<string, Record<string, PlayValue>>();
    for (const id of playIds) Object.assign(out.get(id)!, spec.empty, values.get(id));
  }
  return out;
}
