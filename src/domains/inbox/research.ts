import type { Services } from '../../services.ts';
import { parseRange, playsInRange } from '../nowPlaying/playLog.ts';
import type { Station } from '../stations/model.ts';
import { trackKey } from './catalogue.ts';

// Music research (docs/inbox.md, "Which songs listeners liked"): per track, its plays in the range, their
// likes and dislikes, and how many listeners heard them (the audience figures the play log carries), so
// likes per thousand listeners compare a hit played at 8 am with one played at 3 am.

export const MAX_RESEARCH_DAYS = 92;

interface TrackTally {
  artist: string | null;
  title: string;
  plays: number;
  likes: number;
  dislikes: number;
  performances: number | null;
}

type ResearchServices = Pick<Services, 'db' | 'config' | 'clock'>;

/** The tracks with at least one vote in `[from, to)`, most liked first, then by likes per thousand. */
export async function trackVotes(svc: ResearchServices, station: Station, query: { from?: string; to?: string }) {
  const range = parseRange(query, MAX_RESEARCH_DAYS);
  const tallies = new Map<string, TrackTally>();
  const context = { db: svc.db, config: svc.config, now: svc.clock.now() };
  for await (const play of playsInRange(context, station, range)) {
    const artist = play.artist === null ? null : String(play.artist);
    const title = String(play.title);
    const key = trackKey(artist, title);
    const id = `${key.artistKey}\u0000${key.titleKey}`;
    let tally = tallies.get(id);
    if (!tally) tallies.set(id, (tally = { artist, title, plays: 0, likes: 0, dislikes: 0, performances: null }));
    // The latest play's spelling names the track.
    tally.artist = artist;
    tally.title = title;
    tally.plays++;
    tally.likes += Number(play.likes ?? 0);
    tally.dislikes += Number(play.dislikes ?? 0);
    if (typeof play.performances === 'number') tally.performances = (tally.performances ?? 0) + play.performances;
  }
  const tracks = [...tallies.values()]
    .filter((t) => t.likes + t.dislikes > 0)
    .map((t) => ({
      ...t,
      likesPerThousand: t.performances ? Math.round((t.likes * 1000 * 100) / t.performances) / 100 : null,
    }))
    .sort((a, b) => b.likes - a.likes || (b.likesPerThousand ?? -1) - (a.likesPerThousand ?? -1) || a.title.localeCompare(b.title));
  return { tracks };
}
