import type { IncomingMessage } from 'node:http';
import { ValidationError, WavelineError } from '../../lib/errors.ts';
import { newId } from '../../lib/ids.ts';
import type { Services } from '../../services.ts';
import { DurationProbe } from './audio.ts';
import { discardFiles, type StoredFile } from './commands.ts';
import { inspectUpload, type Inspection } from './inspect.ts';
import { kindOf, MAX_UPLOAD_BYTES } from './model.ts';
import { MediaStoreUnavailableError, newObjectKey } from './store.ts';
import { UploadBody } from './upload.ts';

// An upload from the request stream to the current store (docs/media.md, "Upload"): hashed and counted
// on the way, refused at the first byte past its type's limit, inspected, and durable before the caller
// writes its rows. Whatever fails, nothing of it stays in the store.

/** Audio and video may be as large as MEDIA_MAX_AUDIO_MIB; images and other files 50 MiB. */
export function uploadLimit(svc: Pick<Services, 'config'>, mime: string): number {
  const kind = kindOf(mime);
  return kind === 'audio' || kind === 'video' ? svc.config.media.maxAudioBytes : MAX_UPLOAD_BYTES;
}

export interface ReceivedUpload {
  versionId: string;
  file: StoredFile;
  inspection: Inspection;
}

const empty = () =>
  new ValidationError('The upload is empty.', [{ path: 'body', code: 'required', message: 'body must hold the file’s bytes' }]);

/**
 * Streams the request body to the current store under a new version's key. Resolves once the bytes are
 * durable and inspected; the caller writes the rows (and calls `discardFiles` when that fails).
 */
export async function receiveUpload(
  svc: Pick<Services, 'config' | 'media' | 'logger'>,
  req: IncomingMessage,
  mime: string,
): Promise<ReceivedUpload> {
  const kind = kindOf(mime);
  const declared = Number(req.headers['content-length']);
  const size = Number.isFinite(declared) ? declared : undefined;
  const probe = kind === 'audio' ? new DurationProbe(mime, size) : null;
  const body = new UploadBody(req, uploadLimit(svc, mime), { keep: kind === 'image', tap: probe });
  if (body.failure) throw body.failure;
  if (size === 0) throw empty();
  const versionId = newId();
  const key = newObjectKey(versionId, 'original', mime);
  let stored: StoredFile;
  try {
    const store = await svc.media.current();
    stored = { store: store.name, key, ...(await store.put(key, body, { mime, size })) };
  } catch (err) {
    probe?.abort();
    if (body.failure) throw body.failure;
    if (err instanceof WavelineError) throw err;
    svc.logger.error({ err, store: svc.media.currentName }, 'media upload: the store failed');
    throw new MediaStoreUnavailableError(svc.media.currentName);
  }
  try {
    if (stored.size === 0) throw empty();
    const inspection =
      kind === 'image'
        ? await inspectUpload(mime, body.bytes)
        : { kind, width: null, height: null, duration: probe ? await probe.duration(stored.size) : null };
    return { versionId, file: stored, inspection };
  } catch (err) {
    await discardFiles(svc, [stored]);
    throw err;
  }
}
