import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { Db } from '../../../lib/db.ts';
import { Digest, type ByteRange, type MediaStore, type StoredObject } from '../store.ts';

// The postgres store: each object is a run of 1 MiB rows of media_chunks (bytea kept uncompressed),
// written one statement per chunk. Memory stays at one chunk and the time grows linearly with the
// size; one 40 MiB bytea parameter cost the embedded database far more than its share. A range reads
// only the chunks it covers.

export const CHUNK_BYTES = 1024 * 1024;

/** Cuts a stream of arbitrary pieces into CHUNK_BYTES pieces (the last one shorter). */
async function* chunked(source: AsyncIterable<Buffer>): AsyncGenerator<Buffer> {
  let pending: Buffer[] = [];
  let pendingBytes = 0;
  for await (const piece of source) {
    let rest = piece;
    while (pendingBytes + rest.length >= CHUNK_BYTES) {
      const take = CHUNK_BYTES - pendingBytes;
      pending.push(rest.subarray(0, take));
      yield Buffer.concat(pending, CHUNK_BYTES);
      rest = rest.subarray(take);
      pending = [];
      pendingBytes = 0;
    }
    if (rest.length) {
      pending.push(rest);
      pendingBytes += rest.length;
    }
  }
  if (pendingBytes) yield Buffer.concat(pending, pendingBytes);
}

export class PostgresMediaStore implements MediaStore {
  readonly name = 'postgres' as const;
  private readonly db: Db;

  constructor(db: Db) {
    this.db = db;
  }

  async put(key: string, body: Readable, _options: { mime: string }): Promise<StoredObject> {
    const digest = new Digest();
    let seq = 0;
    // One chunk is written while the next one arrives (two in memory at most): the upload does not stall
    // for each INSERT's round trip.
    let previous: Promise<void> = Promise.resolve();
    try {
      await pipeline(body, digest, async (source: AsyncIterable<Buffer>) => {
        for await (const chunk of chunked(source)) {
          await previous;
          const insert = this.db('media_chunks')
            .insert({ object_key: key, seq, bytes: chunk })
            .then(() => undefined);
          insert.catch(() => undefined); // awaited with the next chunk or at the end; not unhandled meanwhile
          previous = insert;
          seq += 1;
        }
        await previous;
      });
    } catch (err) {
      // The chunk still being written lands first: then every chunk of the key goes.
      await previous.catch(() => undefined);
      await this.delete(key).catch(() => undefined);
      throw err;
    }
    return digest.result();
  }

  async head(key: string): Promise<{ size: number } | null> {
    const row = await this.db('media_chunks')
      .where({ object_key: key })
      .first<{ n: number; size: number | null } | undefined>(
        this.db.raw('count(*)::int AS n'),
        this.db.raw('sum(octet_length(bytes))::bigint AS size'),
      );
    return row && row.n > 0 ? { size: Number(row.size) } : null;
  }

  async get(key: string, range?: ByteRange): Promise<Readable | null> {
    const size = range ? null : await this.head(key);
    if (!range && !size) return null;
    const { start, end } = range ?? { start: 0, end: (size as { size: number }).size - 1 };
    const first = await this.slice(key, start, end);
    if (!first) return null;
    return Readable.from(this.read(key, start, end, first), { objectMode: false });
  }

  /**
   * The bytes from `at` to at most `end` that its chunk holds: only that part of the chunk is fetched
   * (its bytea is stored uncompressed, so Postgres reads just the TOAST pieces covering it).
   */
  private async slice(key: string, at: number, end: number): Promise<Buffer | null> {
    const seq = Math.floor(at / CHUNK_BYTES);
    const offset = at - seq * CHUNK_BYTES;
    const length = Math.min(CHUNK_BYTES - offset, end - at + 1);
    const row = await this.db('media_chunks')
      .where({ object_key: key, seq })
      .first<{ bytes: Buffer } | undefined>(this.db.raw('substring(bytes FROM ?::int FOR ?::int) AS bytes', [offset + 1, length]));
    return row?.bytes ?? null;
  }

  private async *read(key: string, start: number, end: number, first: Buffer): AsyncGenerator<Buffer> {
    let piece: Buffer | null = first;
    for (let at = start; at <= end;) {
      if (!piece) throw new Error(`media object ${key} lost a chunk while it was being read`);
      if (piece.length === 0) throw new Error(`media object ${key} is shorter than expected`);
      yield piece;
      at += piece.length;
      piece = at <= end ? await this.slice(key, at, end) : null;
    }
  }

  async delete(key: string): Promise<void> {
    await this.db('media_chunks').where({ object_key: key }).delete();
  }

  async *list(prefix = ''): AsyncIterable<{ key: string; size: number }> {
    const rows = await this.db('media_chunks')
      .where('object_key', 'like', `${prefix.replace(/[\\%_]/g, '\\$&')}%`)
      .groupBy('object_key')
      .select<Array<{ key: string; size: number }>>('object_key as key', this.db.raw('sum(octet_length(bytes))::bigint AS size'));
    for (const row of rows) yield { key: row.key, size: Number(row.size) };
  }

  publicPath(): null {
    return null;
  }

  async close(): Promise<void> {}
}
