import type { Redis } from './redis.ts';
import { keys } from './keys.ts';
import type { Logger } from './logger.ts';

/** `reads`: a listener read's data changed (id `<stationId>:<area>`, lib/readCache.ts). */
export type InvalidationTopic = 'station' | 'credential' | 'reads' | 'webhooks';
type Handler = (id: string) => void;

/**
 * Cross-process cache invalidation. A writer calls `invalidate()` after its transaction commits; the
 * local handlers run at once (so the writing process never serves the old value) and every other
 * process hears it through Redis pub/sub.
 */
export class Invalidation {
  private readonly handlers = new Map<InvalidationTopic, Handler[]>();
  private readonly publisher: Redis;
  private readonly subscriber: Redis;
  private readonly logger: Logger;
  constructor(publisher: Redis, subscriber: Redis, logger: Logger) {
    this.publisher = publisher;
    this.subscriber = subscriber;
    this.logger = logger;
  }

  async start(): Promise<void> {
    this.subscriber.on('message', (channel: string, message: string) => {
      if (channel !== keys.invalidateChannel) return;
      const sep = message.indexOf(':');
      this.runLocal(message.slice(0, sep) as InvalidationTopic, message.slice(sep + 1));
    });
    await this.subscriber.subscribe(keys.invalidateChannel);
  }

  on(topic: InvalidationTopic, handler: Handler): void {
    const list = this.handlers.get(topic) ?? [];
    list.push(handler);
    this.handlers.set(topic, list);
  }

  async invalidate(topic: InvalidationTopic, id: string): Promise<void> {
    this.runLocal(topic, id);
    try {
      await this.publisher.publish(keys.invalidateChannel, `${topic}:${id}`);
    } catch (err) {
      this.logger.warn({ err, topic }, 'could not broadcast cache invalidation');
    }
  }

  private runLocal(topic: InvalidationTopic, id: string): void {
    for (const handler of this.handlers.get(topic) ?? []) handler(id);
  }
}
