import { createHash } from 'node:crypto';
import type { Db } from '../../lib/db.ts';
import { artworkChecks } from './metrics.ts';
import type { Services } from '../../services.ts';
import type { Station } from '../stations/model.ts';
import { fetchBounded, type FetchOutcome } from '../../lib/boundedFetch.ts';
import { blockedHashes } from './blocked.ts';
import { inspectImage } from './inspect.ts';
import { keepImage } from './keep.ts';
import {
  FAILURE_MEMORY_MS,
  FETCH_MAX_BYTES,
  FETCH_MAX_REDIRECTS,
  FETCH_TIMEOUT_MS,
  type ArtworkCheckRow,
  type ArtworkSetting,
  type CheckedSource,
  type RejectReason,
} from './model.ts';

// A check of one image (docs/now-playing.md#the-checks-worker-queue-artwork): fetched under the outbound rules
// (lib/boundedFetch.ts), inspected, kept when it passes. The result of a URL is stored per station; a failure is
// remembered 24 h and the URL is not fetched again meanwhile.

export const urlHash = (url: string): string => createHash('sha256').update(url).digest('hex');

export type CheckResult = { status: 'kept'; imageId: string } | { status: 'rejected'; reason: RejectReason };

/** The stored result of a URL that still holds at `now` (a kept one always does); null when a check is due. */
export async function currentCheck(db: Db, stationId: string, url: string, now: Date): Promise<ArtworkCheckRow | null> {
  const row = await db<ArtworkCheckRow>('artwork_checks')
    .where({ station_id: stationId, url_hash: urlHash(url) })
    .first();
  if (!row) return null;
  if (row.status === 'kept' && row.image_id) return row;
  return row.expires_at && row.expires_at.getTime() > now.getTime() ? row : null;
}

/** Inspects bytes already at hand (an uploaded version, a fetched body) and keeps them when they pass. */
export async function checkBytes(
  svc: Pick<Services, 'db' | 'clock' | 'media' | 'logger'>,
  station: Pick<Station, 'id' | 'radiodns'>,
  setting: ArtworkSetting,
  bytes: Buffer,
): Promise<CheckResult> {
  const sha256 = createHash('sha256').update(bytes).digest('hex');
  // Bytes kept before need no renditions: only the checks run again (the setting or blocks may differ).
  const known = await svc.db('artwork_images').where({ station_id: station.id, sha256 }).first('id');
  const verdict = await inspectImage(bytes, setting.minSize, await blockedHashes(svc, station, setting), !known);
  if (!verdict.ok) return { status: 'rejected', reason: verdict.reason };
  if (known) return { status: 'kept', imageId: known.id as string };
  const image = await keepImage(svc, station.id, bytes, verdict, svc.clock.now());
  return { status: 'kept', imageId: image.id };
}

const IMAGE_HEADERS = { accept: 'image/avif,image/webp,image/png,image/jpeg;q=0.9,*/*;q=0.1', 'user-agent': 'Waveline-Artwork/1' };

/** Fetches an image URL under the outbound rules (lib/boundedFetch.ts) with an image's budget. */
export function fetchImage(svc: Pick<Services, 'config'>, url: string): Promise<FetchOutcome> {
  const limits = {
    allowInsecure: svc.config.webhooks.allowInsecure,
    maxBytes: FETCH_MAX_BYTES,
    timeoutMs: FETCH_TIMEOUT_MS,
    maxRedirects: FETCH_MAX_REDIRECTS,
  };
  return fetchBounded(url, limits, IMAGE_HEADERS);
}

/** Fetches and checks a URL unless a result still holds; stores and answers the result. */
export async function checkUrl(svc: Services, station: Station, url: string, source: CheckedSource): Promise<ArtworkCheckRow> {
  const known = await currentCheck(svc.db, station.id, url, svc.clock.now());
  if (known) return known;
  const setting = station.artwork;
  const fetched = await fetchImage(svc, url);
  let result: CheckResult;
  if (!fetched.ok) {
    result = { status: 'rejected', reason: fetched.failure };
    svc.logger.info({ stationId: station.id, url, reason: fetched.failure, detail: fetched.detail }, 'artwork not fetched');
  } else {
    result = await checkBytes(svc, station, setting, fetched.bytes);
  }
  artworkChecks.labels(source, result.status === 'kept' ? 'kept' : result.reason).inc();
  return recordCheck(svc.db, station.id, url, source, result, svc.clock.now());
}

export async function recordCheck(
  db: Db,
  stationId: string,
  url: string,
  source: CheckedSource,
  result: CheckResult,
  now: Date,
): Promise<ArtworkCheckRow> {
  const row: ArtworkCheckRow = {
    station_id: stationId,
    url_hash: urlHash(url),
    url,
    source,
    status: result.status,
    reason: result.status === 'rejected' ? result.reason : null,
    image_id: result.status === 'kept' ? result.imageId : null,
    checked_at: now,
    expires_at: result.status === 'rejected' ? new Date(now.getTime() + FAILURE_MEMORY_MS) : null,
  };
  await db('artwork_checks')
    .insert(row)
    .onConflict(['station_id', 'url_hash'])
    .merge(['source', 'status', 'reason', 'image_id', 'checked_at', 'expires_at']);
  return row;
}
