import { canonicalJson } from '../../lib/canonicalJson.ts';
import type { Logger } from '../../lib/logger.ts';
import type { Station } from './model.ts';

// `stationChanged`: what a station write did, announced once it is committed, to the features that
// follow it (radiodns renders a new logo, schedule rebuilds the on-air row when `upNext` changes). The
// stations files name none of them: each subscribes from a file in its own folder (docs/architecture.md,
// "A feature's station setting"). Caches that every process keeps follow the `station` invalidation
// instead (it reaches the other processes too); this hook runs only where the write happened.

export interface StationChange {
  /** The station before the write; null when the write created it. */
  before: Station | null;
  after: Station;
  /**
   * The station's keys (`upNext`, `radiodns`, …) whose value the write changed (`updatedAt` among them
   * whenever it wrote); every key on create, none when the write changed nothing.
   */
  changed: ReadonlySet<string>;
}

/**
 * What a listener acts with: the process's services, named here by declaration merging (src/services.ts)
 * so the core imports no composition code.
 */
export interface StationChangeSubjects {}

type ChangeServices = StationChangeSubjects extends { services: infer S extends { logger: Logger } } ? S : { logger: Logger };

export type StationChangeListener = (svc: ChangeServices, change: StationChange) => Promise<unknown> | void;

const listeners: Array<{ name: string; listener: StationChangeListener }> = [];

/** Subscribes `listener` (named in logs) to every committed station change, in registration order; returns the unsubscribe. */
export function onStationChanged(name: string, listener: StationChangeListener): () => void {
  const entry = { name, listener };
  listeners.push(entry);
  return () => void listeners.splice(listeners.indexOf(entry), 1);
}

/** The change between two readings of the station (`before` null: created). */
export function stationChange(before: Station | null, after: Station): StationChange {
  const changed = new Set<string>();
  for (const [key, value] of Object.entries(after)) {
    if (!before || canonicalJson(before[key as keyof Station]) !== canonicalJson(value)) changed.add(key);
  }
  return { before, after, changed };
}

/**
 * Runs every listener after the write committed (nothing when nothing changed). A failing listener is
 * logged and the others still run: the write is durable, and its answer stays the write's.
 */
export async function stationChanged(svc: ChangeServices, change: StationChange): Promise<void> {
  if (change.changed.size === 0) return;
  for (const { name, listener } of listeners) {
    try {
      await listener(svc, change);
    } catch (err) {
      svc.logger.error({ err, stationId: change.after.id, listener: name }, 'a station change listener failed');
    }
  }
}
