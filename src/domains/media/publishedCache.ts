import type { Services } from '../../services.ts';
import type { FileVariant } from './model.ts';
import type { PublicFile } from './queries.ts';

// Which files are public, in memory (docs/media.md#reading): a podcast app reads an episode in many
// ranges, and asking the database whether the version is still published for each of them cost most of
// a range read (on the embedded database they wait their turn in one session). Publication changes
// only by writes that invalidate the station's listener reads (content publish and unpublish, program,
// presenter, artwork and station images), so any `reads` or `station` invalidation of a station drops
// its entries, here at once and in every process through the invalidation bus; a computation that saw
// one while it ran is not kept. `waveline media move` drops them too (`media-files`) as files change
// place. Entries also lapse after MAX_AGE_MS, bounding a lost message. Only
// files in a store are kept (not the bytes of files kept in their rows), and no 404: a miss asks the
// database again.

const MAX_AGE_MS = 30_000;
const MAX_ENTRIES = 10_000;

interface Entry {
  file: PublicFile;
  stationId: string;
  expires: number;
}

export class PublishedFiles {
  private readonly entries = new Map<string, Entry>();
  private readonly generations = new Map<string, number>();

  private static key(stationId: string, versionId: string, variant: FileVariant): string {
    return `${stationId}/${versionId}/${variant}`;
  }

  /** Forgets the station's files; a look-up running now is not kept. */
  drop(stationId: string): void {
    this.generations.set(stationId, this.generation(stationId) + 1);
    for (const [key, entry] of this.entries) if (entry.stationId === stationId) this.entries.delete(key);
  }

  /** Forgets one file (its object is gone: re-rendered, or moved to another store). */
  forget(stationId: string, versionId: string, variant: FileVariant): void {
    this.entries.delete(PublishedFiles.key(stationId, versionId, variant));
  }

  private generation(stationId: string): number {
    return this.generations.get(stationId) ?? 0;
  }

  /** The public file kept while fresh (`cached`), else `find()`'s, kept when it is in a store and nothing changed meanwhile. */
  async read(
    stationId: string,
    versionId: string,
    variant: FileVariant,
    find: () => Promise<PublicFile | null>,
  ): Promise<{ file: PublicFile | null; cached: boolean }> {
    const key = PublishedFiles.key(stationId, versionId, variant);
    const hit = this.entries.get(key);
    if (hit && Date.now() < hit.expires) return { file: hit.file, cached: true };
    if (hit) this.entries.delete(key);
    const generation = this.generation(stationId);
    const file = await find();
    if (file && file.store && file.object_key && file.bytes === null && generation === this.generation(stationId)) {
      if (this.entries.size >= MAX_ENTRIES) this.entries.delete(this.entries.keys().next().value!);
      this.entries.set(key, { file, stationId, expires: Date.now() + MAX_AGE_MS });
    }
    return { file, cached: false };
  }
}

const caches = new WeakMap<object, PublishedFiles>();

/** The process's published-file cache of these services, subscribed to the invalidations that change it. */
export function publishedFilesOf(svc: Pick<Services, 'invalidation'>): PublishedFiles {
  let cache = caches.get(svc.invalidation);
  if (!cache) {
    const created = new PublishedFiles();
    svc.invalidation.on('station', (stationId) => created.drop(stationId));
    svc.invalidation.on('reads', (id) => created.drop(id.slice(0, id.lastIndexOf(':'))));
    svc.invalidation.on('media-files', (stationId) => created.drop(stationId));
    caches.set(svc.invalidation, created);
    cache = created;
  }
  return cache;
}
