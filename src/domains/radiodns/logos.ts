import sharp from 'sharp';
import { strongEtag } from '../../http/etag.ts';
import type { Db } from '../../lib/db.ts';
import type { Services } from '../../services.ts';
import { readWholeFile } from '../media/queries.ts';
import type { Station } from '../stations/model.ts';
import { LOGO_SIZES, type LogoSize } from './model.ts';

// The logo renditions SI.xml lists (docs/radiodns.md#logos: rendered by the worker with sharp when the setting or
// logo changes; letterboxed on a transparent background, never stretched). A rendition asked for
// before the worker stored it is rendered then, in the web process, exactly as the job would.

export interface LogoRendition {
  width: number;
  height: number;
  bytes: Buffer;
}

/** The logo scaled to fit inside `size` (aspect kept), centred on transparent bars, as PNG. */
export async function renderLogo(original: Buffer, size: Pick<LogoSize, 'width' | 'height'>): Promise<LogoRendition> {
  const bytes = await sharp(original, { autoOrient: true })
    .ensureAlpha()
    .resize(size.width, size.height, { fit: 'contain', background: { r: 0, g: 0, b: 0, alpha: 0 } })
    .png({ compressionLevel: 9 })
    .toBuffer();
  return { width: size.width, height: size.height, bytes };
}

async function logoSource(svc: Pick<Services, 'db' | 'media'>, stationId: string, versionId: string): Promise<Buffer | null> {
  const image = await svc.db('media_versions').where({ id: versionId, station_id: stationId, kind: 'image' }).first('id');
  return image ? readWholeFile(svc, versionId, 'original') : null;
}

async function storeLogos(db: Db, stationId: string, versionId: string, renditions: LogoRendition[], now: Date): Promise<void> {
  if (renditions.length === 0) return;
  await db('radiodns_logos')
    .insert(
      renditions.map((r) => ({
        version_id: versionId,
        station_id: stationId,
        width: r.width,
        height: r.height,
        etag: strongEtag(r.bytes),
        bytes: r.bytes,
        created_at: now,
      })),
    )
    .onConflict(['version_id', 'width', 'height'])
    .merge(['etag', 'bytes', 'created_at']);
}

/** Renders every size of a station's logo version and stores them; the number stored (0: no such image). */
export async function renderStationLogos(
  svc: Pick<Services, 'db' | 'clock' | 'media'>,
  stationId: string,
  versionId: string,
): Promise<number> {
  const original = await logoSource(svc, stationId, versionId);
  if (!original) return 0;
  const renditions: LogoRendition[] = [];
  // One after another: the media queue bounds how many renderings run at once.
  for (const size of LOGO_SIZES) renditions.push(await renderLogo(original, size));
  await storeLogos(svc.db, stationId, versionId, renditions, svc.clock.now());
  return renditions.length;
}

/** After a write that set the station's logo: the worker renders it (one job per version). */
export function requestLogoRenditions(svc: Pick<Services, 'jobs' | 'logger'>, station: Pick<Station, 'id' | 'radiodns'>): Promise<void> {
  const versionId = station.radiodns.logoVersionId;
  if (!versionId) return Promise.resolve();
  return svc.jobs.enqueue('radiodns.logos', { stationId: station.id, versionId }, { jobId: `radiodns-logos-${versionId}` }).then(
    () => undefined,
    (err: unknown) => svc.logger.warn({ err, stationId: station.id, versionId }, 'radiodns logo rendering could not be enqueued'),
  );
}

export interface StoredLogo {
  etag: string;
  bytes: Buffer;
}

const rendering = new Map<string, Promise<number>>();

/**
 * A stored rendition of the station's current logo; rendered now when the worker has not stored it yet
 * (concurrent requests share one rendering). Null for a version that is not the station's logo or a size
 * SI.xml does not list.
 */
export async function findLogo(
  svc: Services,
  station: Station,
  versionId: string,
  width: number,
  height: number,
): Promise<StoredLogo | null> {
  if (station.radiodns.logoVersionId !== versionId) return null;
  if (!LOGO_SIZES.some((s) => s.width === width && s.height === height)) return null;
  const read = () =>
    svc
      .db('radiodns_logos')
      .where({ version_id: versionId, width, height, station_id: station.id })
      .first<StoredLogo | undefined>('etag', 'bytes');
  const stored = await read();
  if (stored) return stored;
  let pending = rendering.get(versionId);
  if (!pending) {
    pending = renderStationLogos(svc, station.id, versionId).finally(() => rendering.delete(versionId));
    rendering.set(versionId, pending);
  }
  await pending;
  return (await read()) ?? null;
}
