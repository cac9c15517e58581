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
}

/** The feed bus: writers publish after commit, gateways subscribe per station. */
export interface FeedBus {
  publish(message: FeedMessage): Promise<void>;
}

export class RedisFeedBus implements FeedBus {
  private readonly redis: Redis;
  constructor(redis: Redis) {
    this.redis = redis;
  }

  async publish(message: FeedMessage): Promise<void> {
    await this.redis.publish(keys.feedChannel(message.stationId), JSON.stringify(message));
  }
}
