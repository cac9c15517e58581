import { CreateBucketCommand, ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3';
import { mkdtemp, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from './ports.ts';

// A real S3-compatible server for the media store tests: s3rver (npm, a devDependency) on a free port,
// keeping its objects in a temporary folder, in this process. The official SDK talks to it over HTTP
// with signed requests, multipart uploads and pre-signed URLs, as it would to AWS.

interface S3rverInstance {
  run(): Promise<{ port: number }>;
  close(): Promise<void>;
}
type S3rverClass = new (options: Record<string, unknown>) => S3rverInstance;

const S3rver = createRequire(import.meta.url)('s3rver') as S3rverClass;

/** s3rver's fixed credentials. */
export const S3_CREDENTIALS = { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' };

export interface TestS3 {
  endpoint: string;
  bucket: string;
  /** What a process needs to use it as its media store. */
  env: Record<string, string>;
  client: S3Client;
  /** Every key in the bucket (pending multipart uploads are not objects). */
  keys(): Promise<string[]>;
  /** Stops answering (connections refused) until `start()`; the objects stay. */
  stop(): Promise<void>;
  start(): Promise<void>;
  close(): Promise<void>;
}

export async function startS3(bucket = 'waveline-media'): Promise<TestS3> {
  const directory = await mkdtemp(join(tmpdir(), 'waveline-s3-'));
  const port = await freePort();
  let server: S3rverInstance | null = null;
  const endpoint = `http://127.0.0.1:${port}`;
  // Started again on the same port after a stop: until it answers (the port may be briefly held by the
  // stopped server's connections), retried within a deadline rather than assumed.
  const start = async () => {
    if (server) return;
    const deadline = Date.now() + 10_000;
    for (;;) {
      const candidate = new S3rver({ port, address: '127.0.0.1', silent: true, directory });
      try {
        await candidate.run();
        if (
          await fetch(endpoint).then(
            () => true,
            () => false,
          )
        ) {
          server = candidate;
          return;
        }
        await candidate.close().catch(() => undefined);
      } catch (err) {
        if (Date.now() > deadline) throw err;
      }
      if (Date.now() > deadline) throw new Error(`s3rver does not answer on ${endpoint}`);
      await new Promise((ok) => setTimeout(ok, 50));
    }
  };
  // Forgotten before it has closed: closing waits for the connections still open (an upload's parts), and
  // a start meanwhile must run a new server (the port is free as soon as the close begins).
  const stop = async () => {
    const stopping = server;
    server = null;
    await stopping?.close();
  };
  await start();
  const client = new S3Client({
    endpoint,
    region: 'us-east-1',
    forcePathStyle: true,
    credentials: S3_CREDENTIALS,
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
  });
  await client.send(new CreateBucketCommand({ Bucket: bucket }));
  return {
    endpoint,
    bucket,
    env: {
      MEDIA_S3_BUCKET: bucket,
      MEDIA_S3_ENDPOINT: endpoint,
      MEDIA_S3_REGION: 'us-east-1',
      AWS_ACCESS_KEY_ID: S3_CREDENTIALS.accessKeyId,
      AWS_SECRET_ACCESS_KEY: S3_CREDENTIALS.secretAccessKey,
    },
    client,
    async keys() {
      const keys: string[] = [];
      let token: string | undefined;
      do {
        const page = await client.send(new ListObjectsV2Command({ Bucket: bucket, ContinuationToken: token }));
        keys.push(...(page.Contents ?? []).map((c) => c.Key as string));
        token = page.IsTruncated ? page.NextContinuationToken : undefined;
      } while (token);
      return keys.sort();
    },
    stop,
    start,
    async close() {
      client.destroy();
      await stop();
      await rm(directory, { recursive: true, force: true });
    },
  };
}

export const STORE_NAMES = ['postgres', 'filesystem', 's3'] as const;
export type StoreName = (typeof STORE_NAMES)[number];

/** A suite run on each media store: its S3 server and folder, and the settings that choose each store. */
export interface EachStore {
  s3: TestS3;
  dir: string;
  env(name: StoreName): Record<string, string>;
}

/**
 * For a suite that runs on each store (call it inside `describe`): an S3 server with `bucket` and a
 * folder of the suite's own, from before the suite to after it.
 */
export function useEachStore(bucket: string): EachStore {
  const each: EachStore = {
    s3: undefined as unknown as TestS3,
    dir: '',
    env(name): Record<string, string> {
      if (name === 'postgres') return { MEDIA_DIR: '', MEDIA_S3_BUCKET: '' };
      if (name === 'filesystem') return { MEDIA_DIR: each.dir, MEDIA_S3_BUCKET: '' };
      return { MEDIA_DIR: '', ...each.s3.env };
    },
  };
  before(async () => {
    each.s3 = await startS3(bucket);
    each.dir = await mkdtemp(join(tmpdir(), `waveline-${bucket}-`));
  });
  after(async () => {
    await each.s3.close();
    await rm(each.dir, { recursive: true, force: true });
  });
  return each;
}
