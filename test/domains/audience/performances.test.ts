import { expect } from 'chai';
import { useClockedServer } from '../../support/server.ts';
import { admin } from '../../support/http.ts';
import { ADMIN_TOKEN } from '../../support/env.ts';
import { ingestFixture } from '../../support/ingest.ts';
import { fixDuePlays } from '../../../src/domains/audience/performances.ts';
import { audienceFix } from '../../../workers/audience.ts';
import type { Services } from '../../../src/services.ts';
import { STREAMS, parseCsv, play, pushSamples } from './helpers.ts';

// docs/audience.md#how-performances-are-estimated: performances of a play on a stream = the largest sample of that stream in
// the play's audible interval (start and end shifted by the stream's latencySeconds, the start widened
// by one poll interval); null when none, never 0; the play's figure is the sum, null when no stream has
// one; fixed at the play's end plus one poll interval, recomputed when a pushed sample lands in it. The
// play log has `performances` and `performancesByStream` in JSON and CSV.

const T0 = new Date('2026-06-01T12:00:00Z');
const t = (seconds: number) => T0.getTime() + seconds * 1000;
const iso = (seconds: number) => new Date(t(seconds)).toISOString();
const RANGE = `from=${encodeURIComponent(iso(-3600))}&to=${encodeURIComponent(iso(3600))}`;

describe('audience: performances per play', () => {
  const { clock, server } = useClockedServer(T0, { reset: true });
  const svc = () => server.svc as unknown as Services;

  async function scene() {
    const { station, ingestToken } = await ingestFixture(server.url, { rundownFollowing: false, profile: { streamUrls: STREAMS } });
    // A [-600, -400], B [-400, -200], C [-200, -100] (its duration), D from -50 with no known end.
    await play(server.url, station, ingestToken, 'A', t(-600));
    await play(server.url, station, ingestToken, 'B', t(-400));
    await play(server.url, station, ingestToken, 'C', t(-200), { durationSeconds: 100 });
    await play(server.url, station, ingestToken, 'D', t(-50));
    const res = await pushSamples(server.url, station, ingestToken, {
      samples: [
        // mp3 (6 s behind): -610 lies before A only by the widening (A's mp3 interval starts at -600 + 6 − 30 = -624).
        { stream: 'mp3', listeners: 25, at: iso(-610) },
        { stream: 'mp3', listeners: 20, at: iso(-395) },
        { stream: 'mp3', listeners: 15, at: iso(-300) },
        // -96 is after C's on-air end (-100) but inside its audible interval on mp3 (ends -94).
        { stream: 'mp3', listeners: 9, at: iso(-96) },
      ],
    });
    expect(res.status, res.text).to.equal(200);
    return { station, ingestToken };
  }
  const playLog = async (stationId: string) => {
    const res = await admin(server.url, 'GET', `/stations/${stationId}/plays?${RANGE}`);
    expect(res.status, res.text).to.equal(200);
    return Object.fromEntries((res.body.plays as Array<Record<string, any>>).map((p) => [p.title, p]));
  };

  it('largest sample in the audible interval (latency shift, widened start); null per stream without samples, the sum per play, null — never 0 — when no stream has one', async () => {
    const { station } = await scene();
    expect(await fixDuePlays(svc(), { stationId: station.id })).to.equal(3);
    const plays = await playLog(station.id);
    expect(plays.A).to.deep.include({ performances: 25, performancesByStream: { mp3: 25, hls: null } });
    expect(plays.B).to.deep.include({ performances: 20, performancesByStream: { mp3: 20, hls: null } });
    expect(plays.C).to.deep.include({ performances: 9, performancesByStream: { mp3: 9, hls: null } });
    // D is still on air: not fixed, computed from the samples so far — none, so unknown.
    expect(plays.D).to.deep.include({ performances: null, performancesByStream: { mp3: null, hls: null } });
    const fixed = await svc().db('play_performances').where({ station_id: station.id }).count<Array<{ count: string }>>('* as count');
    expect(Number(fixed[0].count)).to.equal(3);
  });

  it('the play log shows a fixed play’s stored figures, also once its samples are gone (samples are kept 35 days, figures with the plays)', async () => {
    const { station } = await scene();
    await fixDuePlays(svc(), { stationId: station.id });
    await svc().db('listener_samples').where({ station_id: station.id }).delete();
    const plays = await playLog(station.id);
    expect(plays.A).to.deep.include({ performances: 25, performancesByStream: { mp3: 25, hls: null } });
    expect(plays.C).to.deep.include({ performances: 9, performancesByStream: { mp3: 9, hls: null } });
    expect(plays.D).to.deep.include({ performances: null, performancesByStream: { mp3: null, hls: null } });
  });

  it('a late pushed sample recomputes the fixed plays whose interval it lies in, and only those', async () => {
    const { station, ingestToken } = await scene();
    await fixDuePlays(svc(), { stationId: station.id });
    // hls is 30 s behind: -150 lies in C's hls interval [-200, -70], not in B's [-400, -170].
    const res = await pushSamples(server.url, station, ingestToken, { samples: [{ stream: 'hls', listeners: 40, at: iso(-150) }] });
    expect(res.status, res.text).to.equal(200);
    const plays = await playLog(station.id);
    expect(plays.C).to.deep.include({ performances: 49, performancesByStream: { mp3: 9, hls: 40 } });
    expect(plays.B).to.deep.include({ performances: 20, performancesByStream: { mp3: 20, hls: null } });
    const stored = await svc().db('play_performances').where({ station_id: station.id, performances: 49 }).first();
    expect(stored, 'the stored figure was recomputed').to.exist;
  });

  it('is fixed when the play has ended plus one poll interval on its most delayed stream (the audience.fix job), not before', async () => {
    const { station, ingestToken } = await scene();
    await pushSamples(server.url, station, ingestToken, { samples: [{ stream: 'mp3', listeners: 3, at: iso(-10) }] });
    await play(server.url, station, ingestToken, 'E', t(0)); // D ends at 0
    await audienceFix({}, svc());
    const dRow = () =>
      svc()
        .db('play_performances as pp')
        .join('observations as o', 'o.id', 'pp.observation_id')
        .where({ 'o.station_id': station.id, 'o.title': 'D' })
        .first('pp.*');
    expect(await dRow(), 'D ended at 0; hls hears it until 30 s, plus a 30 s poll interval').to.equal(undefined);
    clock.advance(59_000);
    await audienceFix({}, svc());
    expect(await dRow()).to.equal(undefined);
    clock.advance(1_000);
    await audienceFix({}, svc());
    const row = await dRow();
    expect(row).to.deep.include({ performances: 3, by_stream: { mp3: 3, hls: null } });
  });

  it('CSV: performancesByStream as the JSON text of its object (quoted, its quotes doubled), an empty cell for a null performances', async () => {
    const { station } = await scene();
    await fixDuePlays(svc(), { stationId: station.id });
    // The bytes as a client gets them: A fixed (stored figures), D still on air (computed now, unknown).
    const res = await fetch(`${server.url}/admin/v1/stations/${station.id}/plays?${RANGE}&format=csv`, {
      headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
    });
    const text = await res.text();
    expect(res.status, text).to.equal(200);
    expect(res.headers.get('content-type')).to.equal('text/csv; charset=utf-8');
    const lines = text.split('\r\n');
    // After them come the listener inbox's likes and dislikes (docs/inbox.md#likes).
    expect(lines[0]).to.match(/,endedAt,performances,performancesByStream,likes,dislikes$/);
    const line = (title: string) => lines.find((l) => l.split(',')[3] === title);
    expect(line('A')).to.match(/,25,"\{""mp3"":25,""hls"":null\}",0,0$/);
    expect(line('D')).to.match(/,,"\{""mp3"":null,""hls"":null\}",0,0$/);
    const byTitle = Object.fromEntries(parseCsv(text).map((r) => [r.title, r]));
    expect(byTitle.A.performances).to.equal('25');
    expect(JSON.parse(byTitle.A.performancesByStream)).to.deep.equal({ mp3: 25, hls: null });
    expect(byTitle.D.performances).to.equal('');
    expect(JSON.parse(byTitle.D.performancesByStream)).to.deep.equal({ mp3: null, hls: null });
  });

  it('a station without streams: every play unknown, performancesByStream {}', async () => {
    const { station, ingestToken } = await ingestFixture(server.url, { rundownFollowing: false });
    await play(server.url, station, ingestToken, 'Solo', t(-100), { durationSeconds: 10 });
    await fixDuePlays(svc(), { stationId: station.id });
    const plays = await playLog(station.id);
    expect(plays.Solo).to.deep.include({ performances: null, performancesByStream: {} });
  });
});
