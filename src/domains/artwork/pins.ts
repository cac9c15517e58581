import type { Services } from '../../services.ts';
import type { Station } from '../stations/model.ts';
import { ValidationError } from '../../lib/errors.ts';
import { readWholeFile } from '../media/queries.ts';
import { checkBytes, currentCheck, recordCheck, type CheckResult } from './checks.ts';
import { stationImageVersion } from '../media/images.ts';
import { type ArtworkCheckRow, type ArtworkPinRow } from './model.ts';
import { matchKey } from '../../lib/matchKey.ts';
import { pinsChanged } from './pinCache.ts';
import { refreshTrackArt } from './refresh.ts';
import { requestCheck } from './requests.ts';
import type { Pin, PinBody } from './schemas.ts';

// Operator pins (docs/now-playing.md#how-an-operator-fixes-wrong-art-in-one-call): the operator's word wins.
// A pin or its removal re-resolves every stored play of the matching artist at once (past plays included),
// and the station's now-playing row follows when its current track is one of them.

export function presentPin(row: ArtworkPinRow): Pin {
  return {
    id: row.id,
    match: { artist: row.match_artist, ...(row.match_title !== null ? { title: row.match_title } : {}) },
    image:
      row.image_kind === 'none'
        ? null
        : row.image_kind === 'version'
          ? { versionId: row.image_version_id as string }
          : { url: row.image_url as string },
    status: row.status,
    reason: row.reason,
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
  };
}

function urlProblem(raw: string): string | null {
  try {
    const url = new URL(raw);
    return url.protocol === 'http:' || url.protocol === 'https:' ? null : 'must be an http or https URL';
  } catch {
    return 'must be an absolute URL';
  }
}

/** Creates or replaces a pin; `created` tells 201 from 200. */
export async function putPin(svc: Services, station: Station, pinId: string, body: PinBody): Promise<{ pin: Pin; created: boolean }> {
  const now = svc.clock.now();
  const image = body.image;
  let status: ArtworkPinRow['status'] = 'kept';
  let reason: ArtworkPinRow['reason'] = null;
  let imageId: string | null = null;
  if (image && 'versionId' in image) {
    const versionId = image.versionId.toLowerCase();
    const version = await stationImageVersion(svc.db, station.id, versionId);
    if (!version)
      throw new ValidationError('image.versionId is not an uploaded image version of this station.', [
        { path: 'image.versionId', code: 'unknown', message: 'must be an uploaded image version of this station' },
      ]);
    // An upload is at hand: it is checked now, so the pin shows its result at once.
    const original = (await readWholeFile(svc, versionId, 'original')) as Buffer;
    const result: CheckResult = await checkBytes(svc, station, station.artwork, original);
    ({ status, reason, imageId } = fromResult(result));
  } else if (image && 'url' in image) {
    const problem = urlProblem(image.url);
    if (problem) throw new ValidationError(`image.url ${problem}.`, [{ path: 'image.url', code: 'format', message: problem }]);
    const known = await currentCheck(svc.db, station.id, image.url, now);
    if (known) ({ status, reason, imageId } = fromCheck(known));
    else status = 'pending';
  }
  const previous = await svc.db<ArtworkPinRow>('artwork_pins').where({ station_id: station.id, id: pinId }).first();
  const row: ArtworkPinRow = {
    station_id: station.id,
    id: pinId,
    match_artist: body.match.artist,
    match_title: body.match.title ?? null,
    artist_key: matchKey(body.match.artist),
    title_key: body.match.title !== undefined ? matchKey(body.match.title) : null,
    image_kind: image === null ? 'none' : 'versionId' in image ? 'version' : 'url',
    image_version_id: image && 'versionId' in image ? image.versionId.toLowerCase() : null,
    image_url: image && 'url' in image ? image.url : null,
    status,
    reason,
    image_id: imageId,
    created_at: previous?.created_at ?? now,
    updated_at: now,
  };
  await svc.db('artwork_pins').insert(row).onConflict(['station_id', 'id']).merge();
  // Every web process's ingest shows it from the next track on (pinCache.ts), before this answers.
  await pinsChanged(svc, station.id);
  if (status === 'pending' && row.image_url) requestCheck(svc, station.id, row.image_url, 'operator');
  await refreshArtists(svc, station, [row.artist_key, previous?.artist_key]);
  return { pin: presentPin(row), created: !previous };
}

export async function deletePin(svc: Services, station: Station, pinId: string): Promise<boolean> {
  const [removed] = await svc.db<ArtworkPinRow>('artwork_pins').where({ station_id: station.id, id: pinId }).delete().returning('*');
  if (!removed) return false;
  await pinsChanged(svc, station.id);
  await refreshArtists(svc, station, [removed.artist_key]);
  return true;
}

async function refreshArtists(svc: Services, station: Station, keys: Array<string | undefined>): Promise<void> {
  const artists = [...new Set(keys.filter((k): k is string => typeof k === 'string'))];
  await refreshTrackArt(svc, station, (q) => q.whereIn('artist_key', artists));
}

const fromResult = (result: CheckResult) =>
  result.status === 'kept'
    ? { status: 'kept' as const, reason: null, imageId: result.imageId }
    : { status: 'rejected' as const, reason: result.reason, imageId: null };

const fromCheck = (check: ArtworkCheckRow) =>
  check.status === 'kept'
    ? { status: 'kept' as const, reason: null, imageId: check.image_id }
    : { status: 'rejected' as const, reason: check.reason, imageId: null };

/** After a URL's check: the pins naming it take its result; every track naming it (or their artists) is resolved again. */
export async function afterCheck(svc: Services, station: Station, check: ArtworkCheckRow): Promise<void> {
  const { status, reason, imageId } = fromCheck(check);
  const pins: ArtworkPinRow[] = await svc
    .db('artwork_pins')
    .where({ station_id: station.id, image_kind: 'url', image_url: check.url })
    .update({ status, reason, image_id: imageId })
    .returning('*');
  if (pins.length) await pinsChanged(svc, station.id);
  const artists = pins.map((p) => p.artist_key);
  await refreshTrackArt(svc, station, (q) =>
    q.andWhere((w) => {
      w.where('artwork_url', check.url).orWhere('catalogue_url', check.url);
      if (artists.length) w.orWhereIn('artist_key', artists);
    }),
  );
}

export { recordCheck };
