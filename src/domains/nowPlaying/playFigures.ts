import type { Db } from '../../lib/db.ts';
import type { Config } from '../../config.ts';
import type { Station } from '../stations/model.ts';
import type { PlayInterval } from './plays.ts';

// The play log's `performances` and `performancesByStream`: listener figures that the feature counting
// listeners adds to each play. The audience feature registers the one source
// (src/domains/audience/playFigures.ts); without one, every play's figures are unknown.

/** A play's listeners: the sum over its streams (null when unknown) and per stream key (null when unknown). */
export interface PlayFigures {
  total: number | null;
  byStream: Record<string, number | null>;
}

/** What a figures source is given besides the station and the plays: the database, the config and the read's instant. */
export interface PlayFiguresContext {
  db: Db;
  config: Config;
  now: Date;
}

/** The figures of a batch of plays, by play id (a play left out is unknown). */
export type PlayFiguresSource = (ctx: PlayFiguresContext, station: Station, plays: PlayInterval[]) => Promise<Map<string, PlayFigures>>;

let source: PlayFiguresSource | null = null;

/** Registers the source (one: a second registration replaces the first). */
export function registerPlayFigures(figures: PlayFiguresSource): void {
  source = figures;
}

/** The figures of a batch of plays; none without a registered source. */
export async function playFiguresOf(ctx: PlayFiguresContext, station: Station, plays: PlayInterval[]): Promise<Map<string, PlayFigures>> {
  return source && plays.length ? source(ctx, station, plays) : new Map();
}
