import {
  DeleteObjectCommand,
  GetObjectCommand,
  HeadObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  S3Client,
  S3ServiceException,
} from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import { Transform, type Readable } from 'node:stream';
import type { MediaConfig } from '../../../config.ts';
import { Digest, MediaStoreUnavailableError, type ByteRange, type MediaStore, type StoredObject } from '../store.ts';

// The s3 store: objects in MEDIA_S3_BUCKET (under MEDIA_S3_PREFIX) on AWS or any S3-compatible service
// (MEDIA_S3_ENDPOINT), through the official SDK. Uploads are multipart (lib-storage): at most
// QUEUE_SIZE parts of PART_BYTES are in memory at once, whatever the file's size, and an upload that
// fails is aborted, so no object appears. Credentials come from the SDK's usual chain (AWS_ACCESS_KEY_ID
// and AWS_SECRET_ACCESS_KEY, AWS_PROFILE, an instance role).

const PART_BYTES = 8 * 1024 * 1024;
const QUEUE_SIZE = 2;

const notFound = (err: unknown) =>
  err instanceof S3ServiceException && (err.name === 'NoSuchKey' || err.name === 'NotFound' || err.$metadata?.httpStatusCode === 404);

function unavailable(err: unknown): MediaStoreUnavailableError {
  const wrapped = new MediaStoreUnavailableError('s3');
  wrapped.cause = err;
  return wrapped;
}

/**
 * At most `length` bytes: some S3-compatible servers answer a one-byte range (`bytes=0-0`) with the
 * whole object.
 */
function firstBytes(length: number): Transform {
  let left = length;
  return new Transform({
    transform(chunk: Buffer, _encoding, done) {
      const piece = left > 0 ? chunk.subarray(0, left) : null;
      left -= piece?.length ?? 0;
      done(null, piece?.length ? piece : undefined);
    },
  });
}

export class S3MediaStore implements MediaStore {
  readonly name = 's3' as const;
  private readonly client: S3Client;
  private readonly bucket: string;
  private readonly prefix: string;

  constructor(config: MediaConfig['s3']) {
    this.bucket = config.bucket;
    this.prefix = config.prefix;
    this.client = new S3Client({
      region: config.region,
      ...(config.credentials ? { credentials: config.credentials } : {}),
      ...(config.endpoint ? { endpoint: config.endpoint, forcePathStyle: true } : {}),
      // S3-compatible services differ in the checksums they know: send and check them only where the API requires.
      requestChecksumCalculation: 'WHEN_REQUIRED',
      responseChecksumValidation: 'WHEN_REQUIRED',
      // An unreachable store answers 503 within seconds rather than hanging a request.
      maxAttempts: 2,
      requestHandler: { connectionTimeout: 2000, requestTimeout: 30_000 },
    });
  }

  private key(key: string): string {
    return `${this.prefix}${key}`;
  }

  async put(key: string, body: Readable, options: { mime: string; size?: number }): Promise<StoredObject> {
    const digest = new Digest();
    body.on('error', (err) => digest.destroy(err));
    const upload = new Upload({
      client: this.client,
      params: { Bucket: this.bucket, Key: this.key(key), Body: body.pipe(digest), ContentType: options.mime },
      partSize: PART_BYTES,
      queueSize: QUEUE_SIZE,
      leavePartsOnError: false,
    });
    try {
      await upload.done();
    } catch (err) {
      if (body.errored) throw body.errored;
      throw unavailable(err);
    }
    if (body.errored) {
      await this.delete(key).catch(() => undefined);
      throw body.errored;
    }
    return digest.result();
  }

  async get(key: string, range?: ByteRange): Promise<Readable | null> {
    try {
      const answer = await this.client.send(
        new GetObjectCommand({ Bucket: this.bucket, Key: this.key(key), Range: range ? `bytes=${range.start}-${range.end}` : undefined }),
      );
      const body = answer.Body as Readable;
      if (!range) return body;
      const limited = firstBytes(range.end - range.start + 1);
      body.on('error', (err) => limited.destroy(err));
      return body.pipe(limited);
    } catch (err) {
      if (notFound(err)) return null;
      throw unavailable(err);
    }
  }

  async head(key: string): Promise<{ size: number } | null> {
    try {
      const answer = await this.client.send(new HeadObjectCommand({ Bucket: this.bucket, Key: this.key(key) }));
      return { size: answer.ContentLength ?? 0 };
    } catch (err) {
      if (notFound(err)) return null;
      throw unavailable(err);
    }
  }

  async delete(key: string): Promise<void> {
    try {
      await this.client.send(new DeleteObjectCommand({ Bucket: this.bucket, Key: this.key(key) }));
    } catch (err) {
      if (!notFound(err)) throw unavailable(err);
    }
  }

  async *list(prefix = ''): AsyncIterable<{ key: string; size: number }> {
    let token: string | undefined;
    do {
      const page = await this.client.send(
        new ListObjectsV2Command({ Bucket: this.bucket, Prefix: this.key(prefix), ContinuationToken: token }),
      );
      for (const object of page.Contents ?? []) if (object.Key) yield { key: object.Key.slice(this.prefix.length), size: object.Size ?? 0 };
      token = page.IsTruncated ? page.NextContinuationToken : undefined;
    } while (token);
  }

  publicPath(key: string): string {
    return this.key(key);
  }

  async presignPut(key: string, options: { mime: string; size: number; expiresInSeconds: number }) {
    const command = new PutObjectCommand({
      Bucket: this.bucket,
      Key: this.key(key),
      ContentType: options.mime,
      ContentLength: options.size,
    });
    const url = await getSignedUrl(this.client, command, {
      expiresIn: options.expiresInSeconds,
      signableHeaders: new Set(['content-type']),
    });
    return { url, headers: { 'content-type': options.mime } };
  }

  async close(): Promise<void> {
    this.client.destroy();
  }
}
