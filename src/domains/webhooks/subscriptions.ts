import { TtlCache } from '../../lib/cache.ts';
import type { Db } from '../../lib/db.ts';
import type { Invalidation } from '../../lib/invalidation.ts';

interface Subscriber {
  id: string;
  events: string[];
  failing_since: Date | null;
}

/** A webhook an event goes to; `failing` ones get their first attempt on the slow lane. */
export interface Target {
  id: string;
  failing: boolean;
}

/**
 * Which active webhooks of a station want which events, kept in memory: the writers that emit events
 * (ingest among them, a hot path) ask on every change, and a station without webhooks must cost no
 * query. Webhook writes invalidate a station's entry everywhere (src/lib/invalidation.ts, topic
 * `webhooks`); the TTL only bounds the damage of a lost invalidation message.
 */
export class WebhookSubscriptions {
  private readonly cache = new TtlCache<string, Subscriber[]>(60_000);
  private readonly db: Db;
  constructor(db: Db, invalidation: Invalidation) {
    this.db = db;
    invalidation.on('webhooks', (stationId) => this.cache.delete(stationId));
  }

  /**
   * The station's active webhooks subscribed to `type`. Inside a transaction pass it as `db`: a look-up
   * on another connection would wait for the transaction on the embedded database, which runs one
   * session (docs/embedded.md), and needs a second pooled connection on a server.
   */
  async targets(stationId: string, type: string, db: Db = this.db): Promise<Target[]> {
    let subscribers = this.cache.get(stationId);
    if (subscribers === undefined) {
      subscribers = await db('webhooks')
        .where({ station_id: stationId, active: true })
        .select<Subscriber[]>('id', 'events', 'failing_since');
      this.cache.set(stationId, subscribers);
    }
    const targets: Target[] = [];
    for (const s of subscribers) if (s.events.includes(type)) targets.push({ id: s.id, failing: s.failing_since !== null });
    return targets;
  }

  /** Whether any active webhook of the station wants one of `types` (without a query when cached as none). */
  async wantsAny(stationId: string, types: string[], db: Db = this.db): Promise<boolean> {
    for (const type of types) if ((await this.targets(stationId, type, db)).length) return true;
    return false;
  }
}
