import type { Services } from '../../services.ts';
import type { MediaStoreName } from './store.ts';

// The sweep of pre-signed uploads (docs/media.md#the-sweep), run hourly by the worker's `media.sweep`:
// an upload announced and never completed keeps, once expired, neither its bytes (the object its URL
// took, in whichever store) nor its row. A completed upload's row goes too; its object is the version's
// file and stays. Uploads are swept an hour after they expire, so a PUT or a completion begun just
// before the end finishes first (neither is accepted after it).

/** How long after its expiry an upload is swept. */
export const SWEEP_GRACE_MS = 60 * 60 * 1000;
const BATCH = 100;

interface ExpiredUpload {
  id: string;
  version_id: string;
  store: MediaStoreName;
  object_key: string;
  completed: boolean;
}

export interface SweepResult {
  /** Uploads never completed whose bytes and row were removed. */
  abandoned: number;
  /** Completed uploads whose row was removed (their file stays). */
  completed: number;
}

export async function sweepExpiredUploads(svc: Pick<Services, 'db' | 'media' | 'logger'>, now: Date): Promise<SweepResult> {
  const before = new Date(now.getTime() - SWEEP_GRACE_MS);
  const result: SweepResult = { abandoned: 0, completed: 0 };
  // Uploads whose object could not be removed (the store is down) keep their row until the next sweep.
  const kept: string[] = [];
  for (;;) {
    const uploads: ExpiredUpload[] = await svc
      .db('media_uploads as u')
      .where('u.expires_at', '<', before)
      .whereNotIn('u.id', kept)
      .orderBy('u.expires_at')
      .limit(BATCH)
      .select(
        'u.id',
        'u.version_id',
        'u.store',
        'u.object_key',
        svc.db.raw('EXISTS (SELECT 1 FROM media_versions v WHERE v.id = u.version_id) AS completed'),
      );
    if (uploads.length === 0) return result;
    for (const upload of uploads) {
      if (!upload.completed) {
        try {
          await (await svc.media.get(upload.store)).delete(upload.object_key);
        } catch (err) {
          svc.logger.warn(
            { err, uploadId: upload.id, store: upload.store },
            'media sweep: an abandoned upload’s object could not be removed',
          );
          kept.push(upload.id);
          continue;
        }
      }
      await svc.db('media_uploads').where({ id: upload.id }).delete();
      if (upload.completed) result.completed += 1;
      else result.abandoned += 1;
    }
  }
}
