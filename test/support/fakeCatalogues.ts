import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

// One local HTTP server speaking the wire formats of the three artwork catalogues Waveline asks:
// the iTunes Search API (/search), MusicBrainz (/ws/2/recording) and the Cover Art Archive (/release/{mbid}).

export interface CatalogueTrack {
  artist: string;
  title: string;
  album: string;
  /** Release MBIDs in MusicBrainz order; the Cover Art Archive has a front cover only for `coverReleaseId`. */
  releaseIds: string[];
  coverReleaseId?: string;
}

export type Mode = 'normal' | 'miss' | 'hang' | 'error' | 'insecure';

export class FakeCatalogues {
  readonly tracks: CatalogueTrack[] = [];
  modes: { itunes: Mode; musicbrainz: Mode; coverart: Mode } = { itunes: 'normal', musicbrainz: 'normal', coverart: 'normal' };
  /** Delay before each answer, to observe concurrency. */
  delayMs = 0;
  readonly requests: Record<'itunes' | 'musicbrainz' | 'coverart', string[]> = { itunes: [], musicbrainz: [], coverart: [] };
  /** When each request arrived (ms) and the User-Agent it sent. */
  readonly arrivals: Record<'itunes' | 'musicbrainz' | 'coverart', Array<{ at: number; userAgent: string }>> = {
    itunes: [],
    musicbrainz: [],
    coverart: [],
  };
  readonly inFlight = { itunes: 0, musicbrainz: 0, coverart: 0 };
  readonly maxInFlight = { itunes: 0, musicbrainz: 0, coverart: 0 };
  url = '';
  private server: Server | null = null;
  private readonly hanging = new Set<ServerResponse>();

  async start(): Promise<this> {
    this.server = createServer((req, res) => void this.handle(req, res));
    await new Promise<void>((resolve) => this.server?.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this;
  }

  async stop(): Promise<void> {
    for (const res of this.hanging) res.destroy();
    this.server?.closeAllConnections();
    await new Promise<void>((resolve) => this.server?.close(() => resolve()));
  }

  reset(): void {
    this.modes = { itunes: 'normal', musicbrainz: 'normal', coverart: 'normal' };
    this.delayMs = 0;
    for (const list of Object.values(this.requests)) list.length = 0;
    for (const list of Object.values(this.arrivals)) list.length = 0;
    for (const key of ['itunes', 'musicbrainz', 'coverart'] as const) this.maxInFlight[key] = 0;
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://fake');
    const provider =
      url.pathname === '/search'
        ? 'itunes'
        : url.pathname.startsWith('/ws/2/recording')
          ? 'musicbrainz'
          : url.pathname.startsWith('/release/')
            ? 'coverart'
            : null;
    if (!provider) return this.send(res, 404, { error: 'not found' });
    this.requests[provider].push(req.url ?? '');
    this.arrivals[provider].push({ at: Date.now(), userAgent: req.headers['user-agent'] ?? '' });
    this.inFlight[provider]++;
    this.maxInFlight[provider] = Math.max(this.maxInFlight[provider], this.inFlight[provider]);
    const mode = this.modes[provider];
    if (mode === 'hang') {
      // Never answered; in flight until the client gives up.
      this.hanging.add(res);
      res.on('close', () => {
        this.hanging.delete(res);
        this.inFlight[provider]--;
      });
      return;
    }
    try {
      if (this.delayMs) await new Promise((r) => setTimeout(r, this.delayMs));
      if (mode === 'error') return this.send(res, 503, { error: 'unavailable' });
      if (provider === 'itunes') return this.send(res, 200, this.itunes(url, mode));
      if (provider === 'musicbrainz') return this.send(res, 200, this.musicbrainz(url, mode));
      return this.coverArt(url, mode, res);
    } finally {
      this.inFlight[provider]--;
    }
  }

  private send(res: ServerResponse, status: number, body: unknown): void {
    res.writeHead(status, { 'content-type': 'application/json; charset=utf-8' });
    res.end(JSON.stringify(body));
  }

  private itunes(url: URL, mode: Mode) {
    const term = (url.searchParams.get('term') ?? '').toLowerCase();
    const found = mode === 'miss' ? [] : this.tracks.filter((t) => term.includes(t.title.toLowerCase()));
    // A decoy first: the search ranks loosely, the caller must pick the right track.
    const decoy = {
      wrapperType: 'track',
      kind: 'song',
      artistName: 'Someone Else',
      trackName: 'Unrelated Song',
      collectionName: 'Other',
      artworkUrl100: 'https://is1-ssl.mzstatic.com/image/thumb/Music/decoy/100x100bb.jpg',
    };
    const results = found.map((t, i) => ({
      wrapperType: 'track',
      kind: 'song',
      artistId: 1000 + i,
      collectionId: 2000 + i,
      trackId: 3000 + i,
      artistName: t.artist,
      collectionName: t.album,
      trackName: t.title,
      artworkUrl30: `${mode === 'insecure' ? 'http' : 'https'}://is1-ssl.mzstatic.com/image/thumb/Music/${encodeURIComponent(t.title)}/30x30bb.jpg`,
      artworkUrl60: `${mode === 'insecure' ? 'http' : 'https'}://is1-ssl.mzstatic.com/image/thumb/Music/${encodeURIComponent(t.title)}/60x60bb.jpg`,
      artworkUrl100: `${mode === 'insecure' ? 'http' : 'https'}://is1-ssl.mzstatic.com/image/thumb/Music/${encodeURIComponent(t.title)}/100x100bb.jpg`,
      trackTimeMillis: 320000,
      country: 'USA',
      primaryGenreName: 'Electronic',
    }));
    const all = results.length ? [decoy, ...results] : [];
    return { resultCount: all.length, results: all };
  }

  private musicbrainz(url: URL, mode: Mode) {
    const query = url.searchParams.get('query') ?? '';
    const title = /recording:"((?:[^"\\]|\\.)*)"/.exec(query)?.[1]?.replace(/\\(.)/g, '$1') ?? '';
    const found = mode === 'miss' ? [] : this.tracks.filter((t) => t.title.toLowerCase() === title.toLowerCase());
    return {
      created: '2026-06-01T12:00:00.000Z',
      count: found.length,
      offset: 0,
      recordings: found.map((t, i) => ({
        id: `0000000${i}-0000-4000-8000-000000000000`,
        score: 100,
        title: t.title,
        length: 320000,
        'artist-credit': [
          { name: t.artist, artist: { id: '11111111-1111-4111-8111-111111111111', name: t.artist, 'sort-name': t.artist } },
        ],
        releases: t.releaseIds.map((id) => ({
          id,
          title: t.album,
          status: 'Official',
          'release-group': { id: '22222222-2222-4222-8222-222222222222', 'primary-type': 'Album' },
        })),
      })),
    };
  }

  private coverArt(url: URL, mode: Mode, res: ServerResponse): void {
    const mbid = url.pathname.split('/')[2];
    const track = this.tracks.find((t) => t.coverReleaseId === mbid);
    if (!track || mode === 'miss') {
      res.writeHead(404, { 'content-type': 'text/plain' });
      res.end('No cover art found for release');
      return;
    }
    const host = mode === 'insecure' ? 'http://images.example.net' : 'http://coverartarchive.org';
    this.send(res, 200, {
      images: [
        {
          types: ['Front'],
          front: true,
          back: false,
          edit: 17462565,
          image: `${host}/release/${mbid}/829521842.jpg`,
          comment: '',
          approved: true,
          id: '829521842',
          thumbnails: {
            250: `${host}/release/${mbid}/829521842-250.jpg`,
            500: `${host}/release/${mbid}/829521842-500.jpg`,
            1200: `${host}/release/${mbid}/829521842-1200.jpg`,
            small: `${host}/release/${mbid}/829521842-250.jpg`,
            large: `${host}/release/${mbid}/829521842-500.jpg`,
          },
        },
      ],
      release: `https://musicbrainz.org/release/${mbid}`,
    });
  }
}
