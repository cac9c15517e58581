import type { Redis } from '../lib/redis.ts';
import { keys } from '../lib/keys.ts';
import type { FeedKind } from './names.ts';

/** What travels on the bus for one changed feed row. */
export interface FeedMessage {
  stationId: string;
  kind: FeedKind;
  entry: string;
  seq: number;
  deleted: boolean;
  data: unknown;
  updatedAt: string;
  /**
   * With read replicas: the write's commit LSN (lib/replicas/routing.ts), so a gateway reading the station's
   * rows from a replica reads one that shows this row.
   */
  lsn?: string;
}

/** The feed bus: writers publish after commit, gateways subscribe per station. */
export interface FeedBus {
  publish(message: FeedMessage): Promise<void>;
}

export class RedisFeedBus implements FeedBus {
  private readonly redis: Redis;
  private readonly walPosition: (() => Promise<string>) | null;
  /** `walPosition`: with read replicas, the primary's WAL position, asked after the commit (lib/replicas/routing.ts). */
  constructor(redis: Redis, walPosition: (() => Promise<string>) | null = null) {
    this.redis = redis;
    this.walPosition = walPosition;
  }

  async publish(message: FeedMessage): Promise<void> {
    const sent = this.walPosition === null ? message : { ...message, lsn: await this.walPosition().catch(() => undefined) };
    await this.redis.publish(keys.feedChannel(message.stationId), JSON.stringify(sent));
  }
}
