import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { useClockedServer } from '../../support/server.ts';
import { admin } from '../../support/http.ts';
import { pushSamples, STREAMS } from '../audience/helpers.ts';
import { inboxFixture } from './helpers.ts';

// docs/inbox.md, "Which songs listeners liked": per track (compared as names are), its plays in the
// range, likes and dislikes, the plays' audience figures summed and likes per thousand of them; only
// tracks with a vote; most liked first, then by likes per thousand.

const T0 = new Date('2026-12-15T12:00:00.000Z');
const H = 3600_000;
const iso = (ms: number) => new Date(ms).toISOString();

describe('inbox: the music-research view (inbox/tracks)', () => {
  const { clock, server } = useClockedServer(T0, { reset: true });

  it('likes per thousand listeners who heard the track, from the audience figures of its plays', async () => {
    const f = await inboxFixture(server.url, clock, { profile: { streamUrls: [STREAMS[0]] } });
    const samples: Array<{ stream: string; listeners: number; at: string }> = [];
    const scene: Array<[string, string, number, number[]]> = [
      // artist, title, listeners during the play (null: no sample), votes
      ['Daft Punk', 'Digital Love', 1000, [1, 1, 1, -1]],
      ['Air', 'Sexy Boy', 200, [1]],
      ['Moby', 'Porcelain', 100, [1]],
      ['DAFT PUNK', 'digital love', 3000, []],
      ['Unheard', 'Track', -1, [1]],
      ['Quiet', 'Track', 50, []],
    ];
    let at = T0.getTime() - 6 * H;
    for (const [artist, title, listeners, votes] of scene) {
      clock.set(at);
      await f.play(artist, title);
      for (const value of votes) expect((await f.like(randomUUID(), value)).status).to.equal(200);
      if (listeners >= 0) samples.push({ stream: STREAMS[0].key, listeners, at: iso(at + 60_000) });
      at += H;
    }
    clock.set(T0);
    expect((await pushSamples(server.url, f.station, f.ingestToken, { samples })).status).to.equal(200);
    const res = await admin(
      server.url,
      'GET',
      `/stations/${f.station.id}/inbox/tracks?from=${iso(T0.getTime() - 7 * H)}&to=${iso(T0.getTime())}`,
    );
    expect(res.status, res.text).to.equal(200);
    expect(res.body.tracks).to.deep.equal([
      { artist: 'DAFT PUNK', title: 'digital love', plays: 2, likes: 3, dislikes: 1, performances: 4000, likesPerThousand: 0.75 },
      { artist: 'Moby', title: 'Porcelain', plays: 1, likes: 1, dislikes: 0, performances: 100, likesPerThousand: 10 },
      { artist: 'Air', title: 'Sexy Boy', plays: 1, likes: 1, dislikes: 0, performances: 200, likesPerThousand: 5 },
      { artist: 'Unheard', title: 'Track', plays: 1, likes: 1, dislikes: 0, performances: null, likesPerThousand: null },
    ]);
    // Only the range's plays count.
    const late = await admin(
      server.url,
      'GET',
      `/stations/${f.station.id}/inbox/tracks?from=${iso(T0.getTime() - 3 * H)}&to=${iso(T0.getTime())}`,
    );
    expect(late.body.tracks.map((t: { title: string; plays: number }) => [t.title, t.plays])).to.deep.equal([['Track', 1]]);
  });

  it('from and to are required ISO timestamps with a zone, to after from, at most 92 days apart', async () => {
    const f = await inboxFixture(server.url, clock);
    const path = `/stations/${f.station.id}/inbox/tracks`;
    for (const query of [
      '',
      'from=2026-12-01T00:00:00Z',
      'from=2026-12-01&to=2026-12-02',
      'from=2026-12-02T00:00:00Z&to=2026-12-01T00:00:00Z',
      'from=2026-09-01T00:00:00Z&to=2026-12-03T00:00:00Z',
      'from=2026-12-01T00:00:00Z&to=2026-12-02T00:00:00Z&limit=3',
    ])
      expect((await admin(server.url, 'GET', `${path}?${query}`)).status, query).to.equal(400);
    expect((await admin(server.url, 'GET', `${path}?from=2026-09-02T00:00:00Z&to=2026-12-03T00:00:00Z`)).status).to.equal(200);
  });
});
