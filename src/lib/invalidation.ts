import { randomBytes } from 'node:crypto';
import { publishCounted, type Redis } from './redis.ts';
import { keys } from './keys.ts';
import type { Logger } from './logger.ts';

/**
 * `reads`: a listener read's data changed (id `<stationId>:<area>`, lib/readCache.ts). `push-cancel`: a
 * push notification was cancelled (id: the notification's; src/domains/push/notifications/sending/leases.ts).
 * `operator-key`: an operator key was rotated or deleted (id: its old key hash). `artwork-pins`: a
 * station's artwork pins changed (id: the station's; src/domains/artwork/pinCache.ts). `inbox`: a
 * station's inbox messages moved on (id: the station's; the studio streams read what is new,
 * src/domains/inbox/streams.ts). `media-files`: a station's media files moved to another place (id: the
 * station's; `waveline media move`, src/domains/media/publishedCache.ts).
 */
export type InvalidationTopic =
  'station' | 'credential' | 'reads' | 'webhooks' | 'push-cancel' | 'operator-key' | 'artwork-pins' | 'inbox' | 'media-files';
/**
 * A handler hears the id and, for the `reads` and `station` topics when read replicas are configured,
 * the commit LSN of the write (lib/replicas/routing.ts): what a listener read of that station must show at least.
 */
type Handler = (id: string, lsn?: string, seed?: string) => void;

/** Topics whose message carries the write's commit LSN (`<topic>:<id>@<lsn>`) when replicas are configured. */
const WITH_LSN: ReadonlySet<InvalidationTopic> = new Set(['reads', 'station']);

/**
 * One change as it travels: `<topic>:<id>[@<lsn>]`, then, when the writer sent one, a newline and its
 * seed — what the write already knows of the new answer (a `reads` change of now-playing carries the new
 * now-playing, lib/readCache.ts `drop`), so a process can answer at once instead of reading it again.
 */
export function parseChange(text: string): { topic: string; id: string; lsn: string | undefined; seed: string | undefined } {
  const newline = text.indexOf('\n');
  const head = newline < 0 ? text : text.slice(0, newline);
  const sep = head.indexOf(':');
  const topic = head.slice(0, sep);
  const [id, lsn] = splitLsn(topic, head.slice(sep + 1));
  return { topic, id, lsn, seed: newline < 0 ? undefined : text.slice(newline + 1) };
}

/** `<id>@<lsn>` → [id, lsn] for the topics that carry one. */
function splitLsn(topic: string, rest: string): [string, string | undefined] {
  if (!WITH_LSN.has(topic as InvalidationTopic)) return [rest, undefined];
  const at = rest.lastIndexOf('@');
  return at < 0 ? [rest, undefined] : [rest.slice(0, at), rest.slice(at + 1)];
}

/** Topics whose change must hold in every process on the next read (a revoked credential, a station offline). */
const CONFIRMED: ReadonlySet<InvalidationTopic> = new Set(['station', 'credential', 'push-cancel', 'operator-key', 'artwork-pins']);
/** How long a writer waits for the other processes' acknowledgements before it answers anyway. */
const CONFIRM_TIMEOUT_MS = 1000;

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
  /** This process' prefix for confirmation tokens, and the confirmations it waits for. */
  private readonly instance = randomBytes(6).toString('hex');
  private sequence = 0;
  /**
   * With read replicas: the primary's WAL position, asked after the write committed and before its
   * invalidation goes out (lib/replicas/routing.ts, WalPosition); `reads` invalidations are then confirmed too.
   */
  private walPosition: (() => Promise<string>) | null = null;
  private confirmedTopics: ReadonlySet<InvalidationTopic> = CONFIRMED;
  private readonly reconnected: Array<() => void> = [];
  private readonly waiting = new Map<string, { received: number; expected: number | null; done(): void }>();
  constructor(publisher: Redis, subscriber: Redis, logger: Logger) {
    this.publisher = publisher;
    this.subscriber = subscriber;
    this.logger = logger;
  }

  async start(): Promise<void> {
    this.subscriber.on('message', (channel: string, message: string) => {
      if (channel === keys.invalidateChannel) {
        this.runLocal(parseChange(message));
      } else if (channel === keys.invalidateSyncChannel) {
        // `<token> <topic>:<id>`: drop the entry, then tell the writer it is gone here.
        const space = message.indexOf(' ');
        this.runLocal(parseChange(message.slice(space + 1)));
        this.publisher.publish(keys.invalidateAckChannel, message.slice(0, space)).catch(() => undefined);
      } else if (channel === keys.invalidateAckChannel) {
        const waiter = this.waiting.get(message);
        if (waiter && ++waiter.received >= (waiter.expected ?? Infinity)) waiter.done();
      }
    });
    await this.subscriber.subscribe(keys.invalidateChannel, keys.invalidateSyncChannel, keys.invalidateAckChannel);
    // Every later `ready` is a reconnection: messages published meanwhile were missed here.
    this.subscriber.on('ready', () => {
      for (const handler of this.reconnected) handler();
    });
  }

  /** Runs `handler` whenever the subscriber connection comes back (invalidations may have been missed meanwhile). */
  onReconnect(handler: () => void): void {
    this.reconnected.push(handler);
  }

  /**
   * Read replicas are configured: `reads` and `station` invalidations carry the write's commit LSN
   * (`position` asks the primary), and a `reads` invalidation is confirmed by every web and worker
   * process before the write answers, as a `station` one always is (docs/operations.md#read-your-writes).
   */
  carryLsn(position: () => Promise<string>): void {
    this.walPosition = position;
    this.confirmedTopics = new Set([...CONFIRMED, 'reads']);
  }

  on(topic: InvalidationTopic, handler: Handler): void {
    const list = this.handlers.get(topic) ?? [];
    list.push(handler);
    this.handlers.set(topic, list);
  }

  /**
   * Drops the entry here and in every process. Station and credential changes are confirmed: the call
   * returns once every web and worker process has dropped it (or after CONFIRM_TIMEOUT_MS), so a
   * revocation or an offline switch holds on the very next read anywhere, not a pub/sub hop later.
   */
  async invalidate(topic: InvalidationTopic, id: string, seed?: string): Promise<void> {
    await this.broadcast(topic, id, seed);
  }

  /**
   * `invalidate`, answering whether every process confirmed it (true for a published unconfirmed topic).
   * `seed` travels with it to every handler (`parseChange`).
   */
  async broadcast(topic: InvalidationTopic, id: string, seed?: string): Promise<boolean> {
    let change = `${topic}:${id}`;
    if (this.walPosition !== null && WITH_LSN.has(topic)) {
      // Asked after the commit: a replica that has replayed this far shows the write.
      const lsn = await this.walPosition().catch((err: unknown) => {
        this.logger.warn({ err, topic }, 'could not read the WAL position of a write');
        return undefined;
      });
      if (lsn !== undefined) change += `@${lsn}`;
    }
    if (seed !== undefined) change += `\n${seed}`;
    this.runLocal(parseChange(change));
    try {
      // The plain channel still carries every change: the gateway's bridge listens there.
      await this.publisher.publish(keys.invalidateChannel, change);
      return this.confirmedTopics.has(topic) ? await this.confirmed(change) : true;
    } catch (err) {
      this.logger.warn({ err, topic }, 'could not broadcast cache invalidation');
      return false;
    }
  }

  private async confirmed(change: string): Promise<boolean> {
    const token = `${this.instance}.${++this.sequence}`;
    let timer: NodeJS.Timeout | undefined;
    const done = new Promise<boolean>((resolve) => {
      this.waiting.set(token, { received: 0, expected: null, done: () => resolve(true) });
      timer = setTimeout(() => resolve(false), CONFIRM_TIMEOUT_MS);
    });
    try {
      // PUBLISH answers how many subscribers received it (on a cluster: counted on every node): the
      // acknowledgements to wait for.
      const receivers = await publishCounted(this.publisher, keys.invalidateSyncChannel, `${token} ${change}`);
      const waiter = this.waiting.get(token)!;
      waiter.expected = receivers;
      if (waiter.received >= receivers) waiter.done();
      return await done;
    } finally {
      clearTimeout(timer);
      this.waiting.delete(token);
    }
  }

  private runLocal({ topic, id, lsn, seed }: ReturnType<typeof parseChange>): void {
    for (const handler of this.handlers.get(topic as InvalidationTopic) ?? []) handler(id, lsn, seed);
  }
}
