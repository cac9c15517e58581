import type { Redis } from '../lib/redis.ts';
import { keys } from '../lib/keys.ts';
import { isRedisUnavailable, RedisUnavailableError } from '../lib/errors.ts';
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
    // On a Redis Cluster a station's channel is sharded: the frame passes through the shard owning it only.
    const channel = keys.feedChannel(message.stationId);
    try {
      if (keys.sharded) await this.redis.spublish(channel, JSON.stringify(message));
      else await this.redis.publish(channel, JSON.stringify(message));
    } catch (err) {
      // Named as Redis' (a 503 saying so), not mistaken for Postgres' by the error's socket code.
      throw isRedisUnavailable(err) ? new RedisUnavailableError() : err;
    }
  }
}
