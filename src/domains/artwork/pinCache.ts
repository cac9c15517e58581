import { LoadingCache } from '../../lib/cache.ts';
import type { Services } from '../../services.ts';
import type { Station } from '../stations/model.ts';
import { type ArtworkImageRow, type ArtworkPinRow } from './model.ts';
import { matchKey } from '../../lib/matchKey.ts';
import { pinFor, pinnedView } from './resolve.ts';
import type { TrackArtView } from './trackArt.ts';

// The operator's pins of each station, in memory, so the ingest applies a pin to the first
// `now-playing` frame of a track (docs/now-playing.md#how-an-operator-fixes-wrong-art-in-one-call: the
// operator's word wins, at once) without a query of its own. A pin write drops the station's entry in every
// process before it answers (src/lib/invalidation.ts, topic `artwork-pins`, confirmed); the TTL only bounds a
// lost message. What a pin does not decide (no pin, a pin still pending or refused) is left to the worker's
// chain.

type CachedPin = ArtworkPinRow & { image: ArtworkImageRow | null };

/** What the ingest stores with a track (nowPlaying's ingest asks `ingestArtOf` before it stores one). */
export interface IngestArt {
  /** The track's art as listeners see it; null: not decided here (the worker resolves it afterwards). */
  view: TrackArtView | null;
  /** The match forms of the artist and title, stored with the observation (null without one). */
  artistKey: string | null;
  titleKey: string | null;
}

const TTL_MS = 60_000;
const caches = new WeakMap<object, LoadingCache<string, CachedPin[]>>();

function pinsOf(svc: Pick<Services, 'db' | 'invalidation' | 'logger'>): LoadingCache<string, CachedPin[]> {
  let cache = caches.get(svc.invalidation);
  if (!cache) {
    const created = new LoadingCache<string, CachedPin[]>(
      TTL_MS,
      async (stationId) => {
        const pins = await svc.db<ArtworkPinRow>('artwork_pins').where({ station_id: stationId });
        const imageIds = pins.map((p) => p.image_id).filter((id): id is string => id !== null);
        const images = imageIds.length ? await svc.db<ArtworkImageRow>('artwork_images').whereIn('id', imageIds) : [];
        const byId = new Map(images.map((image) => [image.id, image]));
        return pins.map((pin) => ({ ...pin, image: pin.image_id ? (byId.get(pin.image_id) ?? null) : null }));
      },
      (err) => svc.logger.warn({ err }, 'artwork pins could not be reloaded'),
    );
    svc.invalidation.on('artwork-pins', (stationId) => created.delete(stationId));
    caches.set(svc.invalidation, created);
    cache = created;
  }
  return cache;
}

/** Drops the station's pins here and in every process (after a pin is written, removed or checked). */
export function pinsChanged(svc: Pick<Services, 'invalidation'>, stationId: string): Promise<void> {
  return svc.invalidation.invalidate('artwork-pins', stationId);
}

function decide(svc: Services, pins: CachedPin[], artist: string | null, title: string | null): IngestArt {
  const artistKey = artist !== null ? matchKey(artist) : null;
  const titleKey = title !== null ? matchKey(title) : null;
  const pin = pinFor(pins, artistKey, titleKey);
  return { view: pinnedView({ publicBaseUrl: svc.config.publicBaseUrl }, pin, pin?.image ?? null), artistKey, titleKey };
}

/**
 * The art of a track about to be stored, so its first `now-playing` frame already shows an operator's
 * pin. Ingest is a hot path: answered from memory, and a promise only while a station's pins load.
 */
export function ingestArtOf(
  svc: Services,
  station: Pick<Station, 'id'>,
  { artist, title }: { artist: string | null; title: string | null },
): IngestArt | Promise<IngestArt> {
  const cache = pinsOf(svc);
  const pins = cache.peek(station.id);
  if (pins !== undefined) return decide(svc, pins, artist, title);
  return cache.getOrLoad(station.id).then(
    (loaded) => decide(svc, loaded, artist, title),
    // Pins unreadable: the track is stored all the same, and the worker's chain applies the pin.
    (err: unknown) => {
      svc.logger.warn({ err, stationId: station.id }, 'artwork pins could not be read at ingest');
      return decide(svc, [], artist, title);
    },
  );
}
