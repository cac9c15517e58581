import { Representation, type ReadBasis } from '../../lib/readCache.ts';
import type { ReadRouting } from '../../lib/replicas/routing.ts';
import type { WebServices } from '../../services.ts';

// SPI documents are served from cached bytes with their ETag, like every listener read. One document
// may show several stations (SI.xml per host name) and receivers name services in three ways, so the
// cache is not keyed by station: any change of a station or of a schedule drops every document — rare
// writes, against constant polling by receivers. A computation that saw an invalidation while it ran is
// not kept. Entries also lapse after a while, bounding a lost cross-process invalidation message.

export const SPI_TYPE = 'application/xml; charset=utf-8';
const MAX_AGE_MS = 300_000;
const MAX_ENTRIES = 5000;

interface Entry {
  rep: Representation | null;
  expires: number;
}

export class SpiCache {
  private readonly entries = new Map<string, Entry>();
  private generation = 0;
  private readonly routing: Pick<ReadRouting<unknown>, 'keeps'> | null;
  /** `routing`: with read replicas, a document read on a replica older than a write heard since is not kept. */
  constructor(routing: Pick<ReadRouting<unknown>, 'keeps'> | null = null) {
    this.routing = routing;
  }

  drop(): void {
    this.generation++;
    this.entries.clear();
  }

  /** A stored answer (null: a stored 404) while fresh, else undefined. */
  peek(key: string): Representation | null | undefined {
    const entry = this.entries.get(key);
    if (!entry) return undefined;
    if (Date.now() >= entry.expires) {
      this.entries.delete(key);
      return undefined;
    }
    return entry.rep;
  }

  async read(key: string, compute: (basis: ReadBasis) => Promise<Buffer | null>): Promise<Representation | null> {
    const hit = this.peek(key);
    if (hit !== undefined) return hit;
    const generation = this.generation;
    const basis: ReadBasis = { lsn: undefined };
    const bytes = await compute(basis);
    const rep = bytes === null ? null : new Representation(bytes, SPI_TYPE);
    if (generation === this.generation && (this.routing === null || this.routing.keeps(null, basis.lsn))) {
      if (this.entries.size >= MAX_ENTRIES) this.entries.delete(this.entries.keys().next().value!);
      this.entries.set(key, { rep, expires: Date.now() + MAX_AGE_MS });
    }
    return rep;
  }
}

const caches = new WeakMap<object, SpiCache>();

/** The process's SPI cache of these services, subscribed to the invalidations that change documents. */
export function spiCacheOf(svc: Pick<WebServices, 'invalidation'> & Partial<Pick<WebServices, 'replicas'>>): SpiCache {
  let cache = caches.get(svc.invalidation);
  if (!cache) {
    const created = new SpiCache(svc.replicas ?? null);
    svc.invalidation.on('station', () => created.drop());
    svc.invalidation.on('reads', (id) => {
      const area = id.slice(id.lastIndexOf(':') + 1);
      if (area === 'schedule' || area === 'station') created.drop();
    });
    caches.set(svc.invalidation, created);
    cache = created;
  }
  return cache;
}
