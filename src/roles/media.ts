import type { Config } from '../config.ts';
import { openEmbedded } from '../lib/embedded/index.ts';
import { createLogger } from '../lib/logger.ts';
import { moveMedia, type MoveProgress } from '../domains/media/move.ts';
import { MEDIA_STORE_NAMES, type MediaStoreName } from '../domains/media/store.ts';
import { createServices } from './services.ts';

const USAGE = `usage: waveline media move --to <s3|filesystem|postgres> [--station <stationId>] [--delete-source]

Copies every media file to another store (docs/media.md, "Moving an archive"), checking each copy's
SHA-256 before its row points at it. Safe to interrupt and run again: it resumes. Listeners are served
throughout. The target is configured as usual (MEDIA_S3_* for s3, MEDIA_DIR for filesystem).
--delete-source: each file's copy is read back from the target and its SHA-256 checked again, then the
old copy is removed (without it, the old copies stay until you remove them).
`;

const GiB = 1024 ** 3;

/** A bar on a terminal; a line every 10% otherwise (logs). */
function progressWriter(out: NodeJS.WriteStream): (p: MoveProgress) => void {
  let lastTenth = -1;
  return (p) => {
    const share = p.totalBytes ? p.bytes / p.totalBytes : p.totalFiles ? p.files / p.totalFiles : 1;
    const text = `${p.files}/${p.totalFiles} files, ${(p.bytes / GiB).toFixed(2)}/${(p.totalBytes / GiB).toFixed(2)} GiB`;
    if (out.isTTY) {
      const width = 30;
      const filled = Math.round(share * width);
      out.write(`\r[${'#'.repeat(filled)}${'.'.repeat(width - filled)}] ${(share * 100).toFixed(0).padStart(3)}% ${text}`);
    } else if (Math.floor(share * 10) > lastTenth) {
      lastTenth = Math.floor(share * 10);
      out.write(`${(share * 100).toFixed(0)}% ${text}\n`);
    }
  };
}

export async function run(baseConfig: Readonly<Config>): Promise<void> {
  const args = process.argv.slice(3);
  const to = args[0] === 'move' && args[1] === '--to' ? (args[2] as MediaStoreName) : null;
  if (!to || !MEDIA_STORE_NAMES.includes(to)) {
    process.stderr.write(USAGE);
    process.exit(64);
  }
  if (to === 's3' && !baseConfig.media.s3.bucket) {
    process.stderr.write('waveline: media move --to s3 needs MEDIA_S3_BUCKET (and its endpoint and credentials)\n');
    process.exit(78);
  }
  const embedded = await openEmbedded(baseConfig);
  const logger = createLogger(embedded.config, 'media');
  const svc = await createServices(embedded.config, logger);
  try {
    const at = args.indexOf('--station');
    const stationId = at >= 0 ? args[at + 1] : undefined;
    const deleteSource = args.includes('--delete-source');
    const result = await moveMedia(svc, to, progressWriter(process.stderr), { stationId, deleteSource });
    if (process.stderr.isTTY) process.stderr.write('\n');
    const moved = result.files - result.failed.length;
    process.stdout.write(`${JSON.stringify({ to, moved, deleteSource, failed: result.failed })}\n`);
    if (result.failed.length) process.exitCode = 1;
  } finally {
    await svc.close();
    await embedded.close();
  }
}
