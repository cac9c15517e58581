import { createHash, randomBytes } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { NotFoundError, PayloadTooLargeError, ValidationError, WavelineError, type Issue } from '../../lib/errors.ts';
import { newId } from '../../lib/ids.ts';
import type { Services } from '../../services.ts';
import { DurationProbe } from './audio.ts';
import { createMediaVersion, discardFiles, type StoredFile } from './commands.ts';
import { inspectUpload, type Inspection } from './inspect.ts';
import { kindOf } from './model.ts';
import { findAsset } from './queries.ts';
import { uploadLimit } from './receive.ts';
import type { UploadGrantBody, UploadReceipt } from './schemas.ts';
import { Digest, MediaStoreUnavailableError, newObjectKey, type MediaStoreName } from './store.ts';
import { UploadBody, uploadMime } from './upload.ts';

// Pre-signed uploads (docs/media.md, "Large uploads from a browser or a CMS"): the operator announces a
// file, its bytes go straight to the store (S3 signs a PUT URL; the other stores take them at a Waveline
// URL carrying a capability token), and the completion checks size, type and SHA-256 before the version
// exists. A file that does not match is removed; a second completion answers what the first did.

/** How long an upload URL is valid. */
export const UPLOAD_TTL_SECONDS = 3600;

interface UploadRow {
  id: string;
  station_id: string;
  version_id: string;
  asset_id: string | null;
  mime: string;
  bytes: number;
  sha256: string | null;
  alt: string;
  credits: string;
  store: MediaStoreName;
  object_key: string;
  token_hash: string | null;
  expires_at: Date;
}

const tokenHash = (token: string) => createHash('sha256').update(token).digest('hex');

export async function createUpload(svc: Services, stationId: string, body: UploadGrantBody) {
  const mime = uploadMime(body.mime, '');
  const limit = uploadLimit(svc, mime);
  if (body.bytes > limit) throw new PayloadTooLargeError(`A ${mime} file may be at most ${limit} bytes (${limit / 1024 / 1024} MiB).`);
  const assetId = body.assetId?.toLowerCase();
  if (assetId && !(await findAsset(svc.db, stationId, assetId))) throw new NotFoundError('Media asset not found.');
  const id = newId();
  const versionId = newId();
  const key = newObjectKey(versionId, 'original', mime);
  const store = await svc.media.current();
  const expiresAt = new Date(svc.clock.nowMs() + UPLOAD_TTL_SECONDS * 1000);
  let url: string;
  let headers: Record<string, string>;
  let token: string | null = null;
  if (store.presignPut) {
    ({ url, headers } = await store.presignPut(key, { mime, size: body.bytes, expiresInSeconds: UPLOAD_TTL_SECONDS }));
  } else {
    token = randomBytes(24).toString('base64url');
    url = `${svc.config.publicBaseUrl}/api/media/uploads/${id}?token=${token}`;
    headers = { 'content-type': mime };
  }
  await svc.db('media_uploads').insert({
    id,
    station_id: stationId,
    version_id: versionId,
    asset_id: assetId ?? null,
    mime,
    bytes: body.bytes,
    sha256: body.sha256?.toLowerCase() ?? null,
    alt: body.alt ?? '',
    credits: body.credits ?? '',
    store: store.name,
    object_key: key,
    token_hash: token ? tokenHash(token) : null,
    expires_at: expiresAt,
    created_at: svc.clock.now(),
  });
  return { uploadId: id, url, method: 'PUT' as const, headers, expiresAt: expiresAt.toISOString() };
}

const gone = () => new NotFoundError('Upload not found (unknown, expired or another station’s).');

async function liveUpload(svc: Services, where: Record<string, string>): Promise<UploadRow> {
  const row = await svc.db<UploadRow>('media_uploads').where(where).where('expires_at', '>', svc.clock.now()).first();
  if (!row) throw gone();
  return row;
}

/** The Waveline upload URL: takes the bytes by PUT for a store that cannot sign one. */
export async function receiveUploadBytes(svc: Services, uploadId: string, token: string, req: IncomingMessage): Promise<void> {
  const upload = await liveUpload(svc, { id: uploadId.toLowerCase() });
  if (!upload.token_hash || upload.token_hash !== tokenHash(token)) throw gone();
  const store = await svc.media.get(upload.store);
  // More than announced is refused while streaming; the completion checks the exact size.
  const body = new UploadBody(req, upload.bytes, {});
  if (body.failure) throw body.failure;
  await store.delete(upload.object_key);
  try {
    await store.put(upload.object_key, body, { mime: upload.mime, size: upload.bytes });
  } catch (err) {
    if (body.failure) throw body.failure;
    if (err instanceof WavelineError) throw err;
    svc.logger.error({ err, store: store.name }, 'media upload URL: the store failed');
    throw new MediaStoreUnavailableError(store.name);
  }
}

const mismatch = (path: 'bytes' | 'mime' | 'sha256', message: string, issue: Partial<Issue> = {}) =>
  new ValidationError(`The uploaded file does not match: ${message}`, [{ path, code: 'mismatch', message, ...issue }]);

/** What the version of a completed upload looks like (a second completion answers it again). */
async function receiptOf(svc: Services, versionId: string): Promise<UploadReceipt | null> {
  const row = await svc.db('media_versions').where({ id: versionId }).first<
    | {
        asset_id: string;
        kind: UploadReceipt['kind'];
        mime: string;
        width: number | null;
        height: number | null;
        duration: number | null;
      }
    | undefined
  >('asset_id', 'kind', 'mime', 'width', 'height', 'duration');
  return row
    ? { assetId: row.asset_id, versionId, kind: row.kind, mime: row.mime, width: row.width, height: row.height, duration: row.duration }
    : null;
}

/** Reads the uploaded object once: its SHA-256, and what inspection needs (an image whole, an audio file's duration). */
async function examine(svc: Services, upload: UploadRow): Promise<{ sha256: string; inspection: Inspection }> {
  const store = await svc.media.get(upload.store);
  const stream = await store.get(upload.object_key);
  if (!stream) throw mismatch('bytes', 'no bytes were received at the upload URL');
  const kind = kindOf(upload.mime);
  const digest = new Digest();
  const probe = kind === 'audio' ? new DurationProbe(upload.mime, upload.bytes) : null;
  const kept: Buffer[] = [];
  for await (const chunk of stream.pipe(digest)) {
    if (kind === 'image') kept.push(chunk as Buffer);
    const wait = probe?.write(chunk as Buffer);
    if (wait) await wait;
  }
  probe?.end();
  const { sha256 } = digest.result();
  if (kind === 'image') {
    try {
      return { sha256, inspection: await inspectUpload(upload.mime, Buffer.concat(kept)) };
    } catch (err) {
      if (err instanceof WavelineError) throw mismatch('mime', `the bytes are not a valid ${upload.mime} image`);
      throw err;
    }
  }
  return { sha256, inspection: { kind, width: null, height: null, duration: probe ? await probe.duration(Number(upload.bytes)) : null } };
}

export async function completeUpload(svc: Services, stationId: string, uploadId: string): Promise<UploadReceipt> {
  const upload = await liveUpload(svc, { id: uploadId.toLowerCase(), station_id: stationId });
  const done = await receiptOf(svc, upload.version_id);
  if (done) return done;
  const file: StoredFile = { store: upload.store, key: upload.object_key, size: 0, sha256: '' };
  const refuse = async (err: unknown): Promise<never> => {
    // Nothing is kept of a file that does not match: not its bytes, not the upload.
    if (err instanceof ValidationError) {
      await discardFiles(svc, [file]);
      await svc.db('media_uploads').where({ id: upload.id }).delete();
    }
    throw err;
  };
  const store = await svc.media.get(upload.store);
  const head = await store.head(upload.object_key);
  if (!head) return refuse(mismatch('bytes', 'no bytes were received at the upload URL'));
  if (head.size !== Number(upload.bytes)) return refuse(mismatch('bytes', `${head.size} bytes were received, ${upload.bytes} announced`));
  const examined = await examine(svc, upload).catch(refuse);
  if (upload.sha256 && examined.sha256 !== upload.sha256) return refuse(mismatch('sha256', 'the SHA-256 of the received bytes differs'));
  try {
    return await createMediaVersion(svc, {
      stationId,
      assetId: upload.asset_id ?? undefined,
      mime: upload.mime,
      alt: upload.alt,
      credits: upload.credits,
      inspection: examined.inspection,
      versionId: upload.version_id,
      file: { ...file, size: head.size, sha256: examined.sha256 },
    });
  } catch (err) {
    // Completed at the same time by another request: that one made the version.
    const made = await receiptOf(svc, upload.version_id);
    if (made) return made;
    throw err;
  }
}
