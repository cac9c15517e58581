import { ConcurrencyLimit } from '../../../lib/concurrencyLimit.ts';
import { catalogueJson, userAgent } from './http.ts';
import type { Pace } from './pacing.ts';
import { score, type Track } from '../../../lib/trackMatch.ts';

// Third-party catalogues, in the order they are asked: the iTunes Search API, then MusicBrainz for a
// release and the Cover Art Archive for its front cover. Each answers an HTTPS artwork URL or null.

export interface ProviderConfig {
  itunesBaseUrl: string;
  musicbrainzBaseUrl: string;
  coverArtBaseUrl: string;
  timeoutMs: number;
  /** The operator's contact (URL or e-mail) sent in the User-Agent. */
  contact: string;
}

/** What a lookup needs besides the track: configuration, and the shared pacing of rate-limited catalogues. */
export interface LookupContext {
  config: ProviderConfig;
  pace: Pace;
}

export interface ArtworkProvider {
  name: string;
  find(track: Track, context: LookupContext): Promise<string | null>;
}

/** A catalogue entry counts only when it is clearly the same track. */
const SAME_TRACK_AT = 0.8;

// Per-provider concurrency in this process. MusicBrainz's one request a second holds across every
// process through `pace` (pacing.ts).
const limits = {
  itunes: new ConcurrencyLimit(4),
  musicbrainz: new ConcurrencyLimit(1),
  coverart: new ConcurrencyLimit(4),
};

const asHttps = (url: unknown): string | null => {
  if (typeof url !== 'string') return null;
  try {
    return new URL(url).protocol === 'https:' ? url : null;
  } catch {
    return null;
  }
};

interface ItunesResult {
  artistName?: string;
  trackName?: string;
  artworkUrl100?: string;
  artworkUrl60?: string;
}

export const itunes: ArtworkProvider = {
  name: 'itunes',
  async find(track, { config }) {
    const term = [track.artist, track.title].filter(Boolean).join(' ');
    const url = `${config.itunesBaseUrl}/search?term=${encodeURIComponent(term)}&media=music&entity=song&limit=10`;
    const body = (await limits.itunes.run(() => catalogueJson(url, config.timeoutMs, userAgent(config.contact)))) as {
      results?: ItunesResult[];
    } | null;
    let best: { result: ItunesResult; score: number } | null = null;
    for (const result of body?.results ?? []) {
      if (!result.trackName) continue;
      const s = score(track, { artist: result.artistName ?? null, title: result.trackName });
      if (s >= SAME_TRACK_AT && (!best || s > best.score)) best = { result, score: s };
    }
    if (!best) return null;
    // The catalogue serves any square size from the same path; 600×600 suits listener apps.
    const art = best.result.artworkUrl100 ?? best.result.artworkUrl60;
    return asHttps(art?.replace(/\/\d+x\d+bb\./, '/600x600bb.'));
  },
};

interface MbRecording {
  title?: string;
  'artist-credit'?: Array<{ name?: string; joinphrase?: string; artist?: { name?: string } }>;
  releases?: Array<{ id?: string }>;
}

interface CaaImage {
  front?: boolean;
  types?: string[];
  image?: string;
  thumbnails?: Record<string, string | undefined>;
}

const lucene = (value: string): string => `"${value.replace(/[\\"]/g, '\\$&')}"`;

const creditName = (recording: MbRecording): string | null =>
  recording['artist-credit']
    ?.map((c) => `${c.name ?? c.artist?.name ?? ''}${c.joinphrase ?? ''}`)
    .join('')
    .trim() || null;

/**
 * The Archive's JSON lists its own image URLs with `http:`; its hosts serve the same paths over TLS,
 * so those (and only those) are upgraded. Any other non-HTTPS URL is refused.
 */
function coverArtHttps(url: string | undefined): string | null {
  if (!url) return null;
  try {
    const parsed = new URL(url);
    if (parsed.protocol === 'http:' && /(^|\.)(coverartarchive|archive)\.org$/.test(parsed.hostname)) parsed.protocol = 'https:';
    return asHttps(parsed.toString());
  } catch {
    return null;
  }
}

async function frontCover(releaseId: string, config: ProviderConfig): Promise<string | null> {
  const url = `${config.coverArtBaseUrl}/release/${encodeURIComponent(releaseId)}`;
  const body = (await limits.coverart.run(() => catalogueJson(url, config.timeoutMs, userAgent(config.contact)))) as {
    images?: CaaImage[];
  } | null;
  const images = body?.images ?? [];
  const front = images.find((i) => i.front) ?? images.find((i) => i.types?.includes('Front'));
  if (!front) return null;
  return coverArtHttps(front.thumbnails?.['500'] ?? front.thumbnails?.large ?? front.image);
}

export const musicbrainz: ArtworkProvider = {
  name: 'musicbrainz',
  async find(track, { config, pace }) {
    const query = track.artist ? `recording:${lucene(track.title)} AND artist:${lucene(track.artist)}` : `recording:${lucene(track.title)}`;
    const url = `${config.musicbrainzBaseUrl}/ws/2/recording?query=${encodeURIComponent(query)}&fmt=json&limit=5`;
    const body = (await limits.musicbrainz.run(async () => {
      await pace('musicbrainz');
      return catalogueJson(url, config.timeoutMs, userAgent(config.contact));
    })) as { recordings?: MbRecording[] } | null;
    const candidates = (body?.recordings ?? [])
      .filter((r) => r.title)
      .map((r) => ({ recording: r, score: score(track, { artist: creditName(r), title: r.title as string }) }))
      .filter((c) => c.score >= SAME_TRACK_AT)
      .sort((a, b) => b.score - a.score);
    const best = candidates[0]?.recording;
    // A recording appears on many releases; the first few with a front cover are enough.
    for (const release of (best?.releases ?? []).slice(0, 3)) {
      if (!release.id) continue;
      const cover = await frontCover(release.id, config);
      if (cover) return cover;
    }
    return null;
  },
};

export const PROVIDERS: ArtworkProvider[] = [itunes, musicbrainz];
