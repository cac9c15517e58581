import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { useClockedServer } from '../../support/server.ts';
import { admin, request } from '../../support/http.ts';
import { inboxFixture, operatorKey } from './helpers.ts';

// docs/inbox.md, "The request policy" and "The request catalogue": a track played within
// trackRepeatMinutes, its artist within artistRepeatMinutes, a track already requested since its last
// play — each compared as names are compared (NFKC, case folded, trimmed, spaces collapsed); and
// `requestable`, the tracks of the last 90 days' plays, accents ignored, most played first.

const T0 = new Date('2026-12-15T10:00:00.000Z');
const MIN = 60_000;

describe('inbox: the request policy', () => {
  const { clock, server } = useClockedServer(T0, { reset: true });

  it('recently-played: 409 REQUEST_REFUSED while the track was played within trackRepeatMinutes, with the seconds until it may be requested; compared as names are', async () => {
    const f = await inboxFixture(server.url, clock, { inbox: { trackRepeatMinutes: 180, artistRepeatMinutes: 0 } });
    await f.play('Daft Punk', 'Digital Love');
    clock.advance(60 * MIN);
    for (const [artist, title] of [
      ['Daft Punk', 'Digital Love'],
      ['  DAFT   punk ', 'digital\tLOVE'],
      ['Ｄａｆｔ Ｐｕｎｋ', 'Digital Love'],
    ]) {
      const res = await f.request(artist, title);
      expect(res.status, `${artist} / ${title}: ${res.text}`).to.equal(409);
      expect(res.body.error).to.deep.include({ code: 'REQUEST_REFUSED', reason: 'recently-played', retryAfterSeconds: 120 * 60 });
    }
    expect((await f.request('Daft Punk', 'Digital Lover')).status, 'another title').to.equal(202);
    clock.advance(120 * MIN);
    expect((await f.request('Daft Punk', 'Digital Love')).status).to.equal(202);
  });

  it('artist-recently-played: another track of an artist played within artistRepeatMinutes; 0 switches a rule off', async () => {
    const f = await inboxFixture(server.url, clock, { inbox: { trackRepeatMinutes: 0, artistRepeatMinutes: 60 } });
    await f.play('Röyksopp', 'Eple');
    clock.advance(15 * MIN);
    const res = await f.request('RÖYKSOPP', 'Poor Leno');
    expect(res.status, res.text).to.equal(409);
    expect(res.body.error).to.deep.include({ reason: 'artist-recently-played', retryAfterSeconds: 45 * 60 });
    // The track rule is off: the track itself is refused by its artist only.
    expect((await f.request('Röyksopp', 'Eple')).body.error.reason).to.equal('artist-recently-played');
    await f.settings({ artistRepeatMinutes: 0 });
    expect((await f.request('Röyksopp', 'Poor Leno')).status).to.equal(202);
  });

  it('the track rule comes before the artist rule; a track played just now counts (the catalogue catches up before the check)', async () => {
    const f = await inboxFixture(server.url, clock, { inbox: { trackRepeatMinutes: 30, artistRepeatMinutes: 60 } });
    await f.play('Air', 'La Femme d’Argent');
    const res = await f.request('Air', 'La Femme d’Argent');
    expect(res.body.error).to.deep.include({ reason: 'recently-played', retryAfterSeconds: 30 * 60 });
    clock.advance(31 * MIN);
    expect((await f.request('Air', 'La Femme d’Argent')).body.error).to.deep.include({
      reason: 'artist-recently-played',
      retryAfterSeconds: 29 * 60,
    });
  });

  it('already-requested: a pending or shown request since the track’s last play refuses another (no retryAfterSeconds); its play, or the studio answering or hiding it, lifts that', async () => {
    const f = await inboxFixture(server.url, clock, { inbox: { trackRepeatMinutes: 0, artistRepeatMinutes: 0 } });
    const first = await f.request('Massive Attack', 'Teardrop');
    expect(first.status).to.equal(202);
    clock.advance(MIN);
    const second = await f.request('massive attack', 'TEARDROP');
    expect(second.status).to.equal(409);
    expect(second.body.error).to.deep.include({ code: 'REQUEST_REFUSED', reason: 'already-requested' });
    expect(second.body.error).to.not.have.property('retryAfterSeconds');
    // Played: the request was granted, so the track may be requested again.
    await f.play('Massive Attack', 'Teardrop');
    clock.advance(MIN);
    const third = await f.request('Massive Attack', 'Teardrop');
    expect(third.status).to.equal(202);
    clock.advance(MIN);
    expect((await f.request('Massive Attack', 'Teardrop')).status).to.equal(409);
    // Shown still counts; answered (or hidden) does not.
    const patch = (status: string) => admin(server.url, 'PATCH', `/stations/${f.station.id}/inbox/messages/${third.body.id}`, { status });
    expect((await patch('shown')).status).to.equal(200);
    expect((await f.request('Massive Attack', 'Teardrop')).status).to.equal(409);
    expect((await patch('answered')).status).to.equal(200);
    expect((await f.request('Massive Attack', 'Teardrop')).status).to.equal(202);
  });

  it('the studio’s check of a stored request (GET …/messages/{id}/policy): the verdict a new request would get now, not counting itself; 404 for another kind; scope inbox:read', async () => {
    const f = await inboxFixture(server.url, clock, { inbox: { trackRepeatMinutes: 0, artistRepeatMinutes: 0 } });
    const check = (id: string) => admin(server.url, 'GET', `/stations/${f.station.id}/inbox/messages/${id}/policy`);
    const first = (await f.request('Portishead', 'Glory Box')).body.id;
    const verdict = await check(first);
    expect(verdict.status, verdict.text).to.equal(200);
    expect(verdict.body, 'a waiting request does not refuse itself').to.deep.equal({ requestable: true });
    // Answered, it no longer counts: another listener's request is taken, and refuses the first one's.
    await admin(server.url, 'PATCH', `/stations/${f.station.id}/inbox/messages/${first}`, { status: 'answered' });
    clock.advance(MIN);
    const second = (await f.request('PORTISHEAD', 'glory box')).body.id;
    expect((await check(second)).body).to.deep.equal({ requestable: true });
    expect((await check(first)).body).to.deep.equal({ requestable: false, reason: 'already-requested' });
    // Played since: the repeat rules answer, with the seconds until they lift.
    await f.settings({ trackRepeatMinutes: 180, artistRepeatMinutes: 60 });
    await f.play('Portishead', 'Glory Box');
    clock.advance(60 * MIN);
    expect((await check(second)).body).to.deep.equal({ requestable: false, reason: 'recently-played', retryAfterSeconds: 120 * 60 });
    await f.settings({ trackRepeatMinutes: 0 });
    clock.advance(-30 * MIN);
    expect((await check(second)).body).to.deep.equal({ requestable: false, reason: 'artist-recently-played', retryAfterSeconds: 30 * 60 });
    // Not a request, unknown, another station's: 404.
    const message = (await f.message('hello')).body.id;
    const other = await inboxFixture(server.url, clock);
    for (const path of [
      `/stations/${f.station.id}/inbox/messages/${message}/policy`,
      `/stations/${f.station.id}/inbox/messages/${randomUUID()}/policy`,
      `/stations/${other.station.id}/inbox/messages/${second}/policy`,
    ]) {
      const res = await admin(server.url, 'GET', path);
      expect(res.status, path).to.equal(404);
      expect(res.body.error.code).to.equal('NOT_FOUND');
    }
    expect((await admin(server.url, 'GET', `/stations/${f.station.id}/inbox/messages/not-an-id/policy`)).status).to.equal(400);
    const reader = await operatorKey(server.url, [f.station.id], ['inbox:read']);
    const writer = await operatorKey(server.url, [f.station.id], ['inbox:write']);
    const path = `/admin/v1/stations/${f.station.id}/inbox/messages/${second}/policy`;
    expect((await request(server.url, 'GET', path, { token: reader })).status).to.equal(200);
    expect((await request(server.url, 'GET', path, { token: writer })).status).to.equal(403);
  });

  it('a refused request stores nothing and counts against no limit', async () => {
    const f = await inboxFixture(server.url, clock, { inbox: { perClientPerHour: 1 } });
    await f.play('Moby', 'Porcelain');
    const clientId = randomUUID();
    for (let i = 0; i < 3; i++) expect((await f.request('Moby', 'Porcelain', { clientId })).status).to.equal(409);
    expect(await f.list()).to.have.length(0);
    expect((await f.send({ clientId, kind: 'message', text: 'still mine' })).status).to.equal(202);
  });
});

describe('inbox: the request catalogue (requestable)', () => {
  const { clock, server } = useClockedServer(T0, { reset: true });

  it('the distinct tracks of the last 90 days whose artist or title holds q, accents, case and width ignored, most played first, with the policy’s verdict', async () => {
    const f = await inboxFixture(server.url, clock, { inbox: { trackRepeatMinutes: 60, artistRepeatMinutes: 0 } });
    clock.advance(-91 * 24 * 60 * MIN);
    await f.play('Beyoncé', 'Déjà Vu'); // older than 90 days by the time of the search
    clock.set(T0.getTime() - 10 * 24 * 60 * MIN);
    await f.play('Beyoncé', 'Halo');
    clock.advance(10 * MIN);
    await f.play('Beyoncé', 'Halo');
    clock.advance(10 * MIN);
    await f.play('BEYONCÉ', 'crazy  in love');
    clock.advance(10 * MIN);
    await f.play('Other', 'Song about Beyonce');
    clock.set(T0);
    await f.play('Beyoncé', 'Crazy In Love');
    clock.advance(20 * MIN);
    const res = await f.requestable('q=beyonce');
    expect(res.status, res.text).to.equal(200);
    expect(res.body.tracks).to.deep.equal([
      // Crazy in Love: played twice (two spellings of one track), the last one names it; played 20
      // minutes ago. Halo too, earlier: the later last play comes first.
      {
        artist: 'Beyoncé',
        title: 'Crazy In Love',
        lastPlayedAt: T0.toISOString(),
        requestable: false,
        reason: 'recently-played',
        retryAfterSeconds: 40 * 60,
      },
      {
        artist: 'Beyoncé',
        title: 'Halo',
        lastPlayedAt: new Date(T0.getTime() - 10 * 24 * 60 * MIN + 10 * MIN).toISOString(),
        requestable: true,
      },
      {
        artist: 'Other',
        title: 'Song about Beyonce',
        lastPlayedAt: new Date(T0.getTime() - 10 * 24 * 60 * MIN + 30 * MIN).toISOString(),
        requestable: true,
      },
    ]);
    expect((await f.requestable('q=DÉJÀ')).body.tracks, 'older than 90 days').to.deep.equal([]);
    expect((await f.requestable('q=halo&limit=1')).body.tracks).to.have.length(1);
    expect((await f.requestable('q=beyonce&limit=1')).body.tracks[0].title).to.equal('Crazy In Love');
    // A pending request shows as already requested.
    expect((await f.request('Beyoncé', 'Halo')).status).to.equal(202);
    const after = (await f.requestable('q=halo')).body.tracks[0];
    expect(after).to.deep.include({ requestable: false, reason: 'already-requested' });
    expect(after).to.not.have.property('retryAfterSeconds');
  });

  it('q is 2–100 characters, limit 1–50; a q that is only accents finds nothing; % and _ are plain characters', async () => {
    const f = await inboxFixture(server.url, clock);
    await f.play('100% Pure', 'Under_score');
    for (const query of ['', 'q=a', `q=${'x'.repeat(101)}`, 'q=ab&limit=0', 'q=ab&limit=51', 'q=ab&other=1']) {
      const res = await f.requestable(query);
      expect(res.status, `${query}: ${res.text}`).to.equal(400);
    }
    expect((await f.requestable('q=%CC%81%CC%81')).body.tracks).to.deep.equal([]);
    expect((await f.requestable('q=0%25')).body.tracks.map((t: { artist: string }) => t.artist)).to.deep.equal(['100% Pure']);
    expect((await f.requestable('q=r_s')).body.tracks.map((t: { title: string }) => t.title)).to.deep.equal(['Under_score']);
    expect((await f.requestable('q=r%25s')).body.tracks).to.deep.equal([]);
  });

  it('shows the HTTPS art of the track’s latest play', async () => {
    const f = await inboxFixture(server.url, clock);
    await f.play('Art', 'With Cover', { artworkUrl: 'https://img.example.org/cover.jpg' });
    const [track] = (await f.requestable('q=cover')).body.tracks;
    expect(track.artworkUrl).to.equal('https://img.example.org/cover.jpg');
  });
});
