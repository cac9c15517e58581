import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startS3, type TestS3 } from './s3.ts';

// The media store the suite runs on: TEST_MEDIA_STORE=postgres|filesystem|s3 (unset: what the
// configuration chooses for the test database, postgres). `s3` starts s3rver (test/support/s3.ts) for
// the run; `filesystem` uses a temporary folder. Set in the root hook, before any configuration loads.

let s3: TestS3 | null = null;
let dir: string | null = null;

export async function useTestMediaStore(): Promise<void> {
  const chosen = process.env.TEST_MEDIA_STORE ?? '';
  if (chosen === '' || chosen === 'postgres') return;
  if (chosen === 'filesystem') {
    dir = await mkdtemp(join(tmpdir(), 'waveline-test-media-'));
    process.env.MEDIA_DIR = dir;
  } else if (chosen === 's3') {
    s3 = await startS3();
    Object.assign(process.env, s3.env);
  } else {
    throw new Error(`TEST_MEDIA_STORE must be postgres, filesystem or s3, got "${chosen}"`);
  }
  process.stderr.write(`media store: ${chosen}\n`);
}

useTestMediaStore.close = async (): Promise<void> => {
  await s3?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
  s3 = null;
  dir = null;
};
