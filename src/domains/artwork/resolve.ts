import type { Db } from '../../lib/db.ts';
import type { Station } from '../stations/model.ts';
import { logoVersionOf } from './blocked.ts';
import { asksCatalogue } from './catalogue/ask.ts';
import { currentCheck } from './checks.ts';
import { imageRef, stationImageVersion } from '../media/images.ts';
import { UNFETCHED, type ArtworkImageRow, type ArtworkPinRow, type ArtworkSetting, type CheckedSource } from './model.ts';
import { matchKey } from '../../lib/matchKey.ts';
import { isHttpsUrl, type ArtworkSource, type TrackArtView, type TrackArtwork } from './trackArt.ts';

// The source chain of a track (docs/now-playing.md#the-source-chain), first that passes wins: the
// operator's pin, the ingest's artworkUrl, the catalogue's find, then (with `fallback` on) the image of
// the program on air, of its first presenter, or the station logo. Pure reads: what is not checked
// yet is reported back (`due`) and the track waits for it with no `artwork`.

/** The observation columns the chain needs. */
export interface ResolvableObservation {
  id: string;
  station_id: string;
  artist: string | null;
  title: string | null;
  artwork_url: string | null;
  catalogue_url: string | null;
  sort_at: Date;
  broadcast_id: string | null;
}

export const RESOLVABLE_COLUMNS = [
  'id',
  'station_id',
  'artist',
  'title',
  'artwork_url',
  'catalogue_url',
  'sort_at',
  'broadcast_id',
] as const;

export interface Resolution {
  view: TrackArtView;
  artistKey: string | null;
  titleKey: string | null;
  /** URLs with no result yet: checks to run. */
  due: Array<{ url: string; source: CheckedSource }>;
  /** The ingest URL was refused and the catalogue is next (catalogue/ask.ts). */
  wantsLookup: boolean;
}

/** What one resolution pass reads once per station. */
export interface ChainContext {
  db: Db;
  station: Pick<Station, 'id' | 'radiodns' | 'artworkLookup'>;
  setting: ArtworkSetting;
  pins: ArtworkPinRow[];
  publicBaseUrl: string;
  now: Date;
  images: Map<string, ArtworkImageRow | null>;
}

export async function chainContext(
  db: Db,
  station: ChainContext['station'],
  setting: ArtworkSetting,
  publicBaseUrl: string,
  now: Date,
): Promise<ChainContext> {
  const pins = await db<ArtworkPinRow>('artwork_pins').where({ station_id: station.id });
  return { db, station, setting, pins, publicBaseUrl, now, images: new Map() };
}

/** A title pin wins over the artist's pin. */
export function pinFor<P extends ArtworkPinRow>(pins: readonly P[], artistKey: string | null, titleKey: string | null): P | null {
  if (artistKey === null) return null;
  const ofArtist = pins.filter((p) => p.artist_key === artistKey);
  return ofArtist.find((p) => p.title_key !== null && p.title_key === titleKey) ?? ofArtist.find((p) => p.title_key === null) ?? null;
}

async function imageOf(ctx: ChainContext, id: string): Promise<ArtworkImageRow | null> {
  if (!ctx.images.has(id)) ctx.images.set(id, (await ctx.db<ArtworkImageRow>('artwork_images').where({ id }).first()) ?? null);
  return ctx.images.get(id) ?? null;
}

/**
 * What a pin shows: no art (`image: null`), or its kept image (`image`, the row its `image_id` names);
 * null when it decides nothing (no pin, a URL pending or refused). The ingest (pinCache.ts) and the
 * chain below share it, so the worker's pass after an ingest finds nothing to change.
 */
export function pinnedView(
  ctx: Pick<ChainContext, 'publicBaseUrl'>,
  pin: ArtworkPinRow | null,
  image: ArtworkImageRow | null,
): TrackArtView | null {
  if (pin?.image_kind === 'none') return { artworkUrl: null, artwork: null };
  return pin?.status === 'kept' && image ? keptView(ctx, image, 'operator') : null;
}

/** The view of a kept image: `artworkUrl` is its 600 variant. */
export function keptView(ctx: Pick<ChainContext, 'publicBaseUrl'>, image: ArtworkImageRow, source: ArtworkSource): TrackArtView {
  const ref = imageRef(ctx.publicBaseUrl, image.station_id, image.version_id);
  const artwork: TrackArtwork = { url: ref.url, source, width: image.width, height: image.height, variants: ref.variants };
  return { artworkUrl: ref.variants['600'], artwork, imageId: image.id };
}

export async function resolveTrackArt(ctx: ChainContext, obs: ResolvableObservation): Promise<Resolution> {
  const artistKey = obs.artist !== null ? matchKey(obs.artist) : null;
  const titleKey = obs.title !== null ? matchKey(obs.title) : null;
  const result = (view: TrackArtView, extra: Partial<Resolution> = {}): Resolution => ({
    view,
    artistKey,
    titleKey,
    due: [],
    wantsLookup: false,
    ...extra,
  });

  const pin = pinFor(ctx.pins, artistKey, titleKey);
  const pinned = pinnedView(ctx, pin, pin?.status === 'kept' && pin.image_id ? await imageOf(ctx, pin.image_id) : null);
  if (pinned) return result(pinned);

  // Track sources: a URL not fetched stays the artworkUrl unless a later source keeps an image.
  let unfetched: string | null = null;
  const candidates: Array<{ url: string | null; source: CheckedSource }> = [{ url: obs.artwork_url, source: 'ingest' }];
  if (ctx.station.artworkLookup) candidates.push({ url: obs.catalogue_url, source: 'catalogue' });
  let ingestRefused = false;
  for (const { url, source } of candidates) {
    if (!url) continue;
    const check = await currentCheck(ctx.db, ctx.station.id, url, ctx.now);
    if (!check) {
      // Not checked yet: the reported URL shows as today, `artwork` waits for the check.
      return result({ artworkUrl: isHttpsUrl(url) ? url : unfetched, artwork: null }, { due: [{ url, source }] });
    }
    if (check.status === 'kept' && check.image_id) {
      const image = await imageOf(ctx, check.image_id);
      if (image) return result(keptView(ctx, image, source));
    }
    if (check.reason && UNFETCHED.has(check.reason)) {
      if (isHttpsUrl(url)) unfetched ??= url;
    } else if (source === 'ingest') {
      // Fetched and refused: the catalogue is the next source. (A URL not fetched stays, as today.)
      ingestRefused = true;
    }
  }
  const wantsLookup = ingestRefused && asksCatalogue(ctx.station, obs, 'ingest-refused');
  const fallback = ctx.setting.fallback ? await fallbackArt(ctx, obs) : null;
  return result({ artworkUrl: unfetched, artwork: fallback }, { wantsLookup });
}

/** The program on air's image, else its first presenter's, else the station logo. */
async function fallbackArt(ctx: ChainContext, obs: ResolvableObservation): Promise<TrackArtwork | null> {
  const { db } = ctx;
  const broadcast = await db('broadcasts as b')
    .join('programs as p', 'p.id', 'b.program_id')
    .where('b.station_id', obs.station_id)
    .andWhere((q) => {
      if (obs.broadcast_id) q.where('b.id', obs.broadcast_id);
      else q.where('b.starts_at', '<=', obs.sort_at).andWhere('b.ends_at', '>', obs.sort_at).andWhere('b.cancelled', false);
    })
    .orderBy('b.starts_at', 'desc')
    .first<{ program_id: string; presenter_ids: string[] | null; image_version_id: string | null } | undefined>(
      'b.program_id',
      'b.presenter_ids',
      'p.image_version_id',
    );
  if (broadcast?.image_version_id) {
    const art = await uploadedArt(ctx, broadcast.image_version_id, 'program');
    if (art) return art;
  }
  if (broadcast) {
    const first =
      broadcast.presenter_ids?.[0] ??
      (await db('program_presenters').where({ program_id: broadcast.program_id }).orderBy('position').first<{ presenter_id: string }>())
        ?.presenter_id;
    const presenter = first
      ? await db('presenters').where({ id: first }).first<{ image_version_id: string | null }>('image_version_id')
      : null;
    if (presenter?.image_version_id) {
      const art = await uploadedArt(ctx, presenter.image_version_id, 'presenter');
      if (art) return art;
    }
  }
  const logo = logoVersionOf(ctx.station, ctx.setting);
  return logo ? uploadedArt(ctx, logo, 'station') : null;
}

async function uploadedArt(ctx: ChainContext, versionId: string, source: ArtworkSource): Promise<TrackArtwork | null> {
  const version = await stationImageVersion(ctx.db, ctx.station.id, versionId);
  if (!version) return null;
  const ref = imageRef(ctx.publicBaseUrl, ctx.station.id, version.id);
  return { url: ref.url, source, width: version.width, height: version.height, variants: ref.variants };
}
