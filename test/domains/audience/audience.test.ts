import { expect } from 'chai';
import { useClockedServer } from '../../support/server.ts';
import { admin } from '../../support/http.ts';
import { ingestFixture } from '../../support/ingest.ts';
import { insertBroadcast } from '../../support/scheduleRows.ts';
import type { Services } from '../../../src/services.ts';
import { STREAMS, pushSamples } from './helpers.ts';

// docs/audience.md, "Listener-hours": GET /admin/v1/stations/{id}/audience?from&to&interval&stream? (or
// broadcastId), scope plays:read: listener-hours by the trapezoid rule over [from, to), a gap over 3 poll
// intervals unknown (not 0), a segment across an edge counted for its part inside (interpolated), an
// hour without data null (never 0), a partly covered hour sums what is known; peaks count the samples in
// [from, to); per stream; `streams: {key: {lastSampleAt, lastError}}`.

const T0 = new Date('2026-06-01T12:00:00Z');
const at = (hhmmss: string) => `2026-06-01T${hhmmss}Z`;

describe('audience: listener-hours and peaks', () => {
  const { server } = useClockedServer(T0, { reset: true });

  async function scene(timezone = 'UTC') {
    const { station, ingestToken } = await ingestFixture(server.url, {
      timezone,
      rundownFollowing: false,
      profile: { streamUrls: STREAMS },
    });
    const res = await pushSamples(server.url, station, ingestToken, {
      samples: [
        { stream: 'mp3', listeners: 10, at: at('10:00:00') },
        { stream: 'mp3', listeners: 20, at: at('10:00:30') },
        { stream: 'mp3', listeners: 20, at: at('10:01:00') },
        // 4 minutes later: more than 3 poll intervals (90 s), the time between is unknown.
        { stream: 'mp3', listeners: 30, at: at('10:05:00') },
        { stream: 'mp3', listeners: 30, at: at('10:05:30') },
        // Across the hour: split at 11:00 by linear interpolation (50 at 11:00).
        { stream: 'mp3', listeners: 40, at: at('10:59:45') },
        { stream: 'mp3', listeners: 60, at: at('11:00:15') },
        // One lone sample: a peak, but no listener-hours.
        { stream: 'hls', listeners: 100, at: at('10:00:00') },
      ],
    });
    expect(res.status, res.text).to.equal(200);
    return station;
  }
  const get = (stationId: string, query: string) => admin(server.url, 'GET', `/stations/${stationId}/audience?${query}`);

  it('hourly: trapezoid listener-hours, gaps unknown, split across the hour, peaks; null — never 0 — for an hour without data', async () => {
    const station = await scene();
    const res = await get(station.id, `from=${at('10:00:00')}&to=${at('13:00:00')}&interval=hour`);
    expect(res.status, res.text).to.equal(200);
    const [h10, h11, h12] = res.body.series;
    // mp3 in hour 10: (10+20)/2·30 s + 20·30 s + 30·30 s + (40+50)/2·15 s = 2625 listener-seconds.
    expect(h10).to.deep.equal({
      at: at('10:00:00').replace('Z', '.000Z'),
      listenerHours: 0.729,
      // 10:00:30 and 10:01:00: mp3 20 + hls 100 (its count is still current, under 3 poll intervals old).
      peak: 120,
      streams: { mp3: { listenerHours: 0.729, peak: 40 }, hls: { listenerHours: null, peak: 100 } },
    });
    expect(h11).to.deep.equal({
      at: at('11:00:00').replace('Z', '.000Z'),
      listenerHours: 0.229,
      peak: 60,
      streams: { mp3: { listenerHours: 0.229, peak: 60 }, hls: { listenerHours: null, peak: null } },
    });
    expect(h12.listenerHours).to.equal(null);
    expect(h12.peak).to.equal(null);
    expect(res.body.total).to.deep.equal({ listenerHours: 0.958, peak: 120 });
    expect(Object.keys(res.body.streams)).to.deep.equal(['mp3', 'hls']);
    expect(res.body.streams.mp3).to.deep.equal({ lastSampleAt: at('11:00:15').replace('Z', '.000Z'), lastError: null });
  });

  it('the curve over [from, to): a segment across an edge counts for its part inside; stream= limits to one stream; an unknown stream is 400 naming stream', async () => {
    const station = await scene();
    const res = await get(station.id, `from=${at('10:00:30')}&to=${at('11:00:00')}&stream=mp3`);
    expect(res.status, res.text).to.equal(200);
    expect(res.body.series).to.have.length(1);
    // From 10:00:30: 20·30 + 30·30 = 1500 listener-seconds, and the 10:59:45 → 11:00:15 segment's part
    // before 11:00, (40+50)/2·15 = 675; 2175 in all. The peak counts only samples inside (60 is at 11:00:15).
    expect(res.body.series[0].streams).to.deep.equal({ mp3: { listenerHours: 0.604, peak: 40 } });
    expect(Object.keys(res.body.streams)).to.deep.equal(['mp3']);
    const bad = await get(station.id, `from=${at('10:00:00')}&to=${at('11:00:00')}&stream=dab`);
    expect(bad.status).to.equal(400);
    expect(bad.body.error.code).to.equal('VALIDATION_ERROR');
    expect(bad.text).to.include('stream');
  });

  it('daily buckets are days in the station’s time zone', async () => {
    const station = await scene('America/New_York');
    const res = await get(station.id, `from=2026-05-31T00:00:00Z&to=2026-06-02T00:00:00Z&interval=day`);
    expect(res.status, res.text).to.equal(200);
    expect(res.body.series.map((b: { at: string }) => b.at)).to.deep.equal([
      '2026-05-30T04:00:00.000Z',
      '2026-05-31T04:00:00.000Z',
      '2026-06-01T04:00:00.000Z',
    ]);
    expect(res.body.series[2].listenerHours).to.equal(0.958);
    expect(res.body.series[0].listenerHours).to.equal(null);
  });

  it('a broadcast’s listener-hours: broadcastId instead of from/to', async () => {
    const station = await scene();
    const { broadcastId } = await insertBroadcast((server.svc as unknown as Services).db, {
      stationId: station.id,
      startsAt: new Date(at('11:00:00')),
      endsAt: new Date(at('12:00:00')),
    });
    const res = await get(station.id, `broadcastId=${broadcastId}`);
    expect(res.status, res.text).to.equal(200);
    expect(res.body).to.include({ broadcastId, from: at('11:00:00').replace('Z', '.000Z'), to: at('12:00:00').replace('Z', '.000Z') });
    // 11:00:00 → 11:00:15 of the segment from 10:59:45: (50+60)/2·15 = 825 listener-seconds.
    expect(res.body.total).to.deep.equal({ listenerHours: 0.229, peak: 60 });
    const other = await get(station.id, `broadcastId=00000000-0000-4000-8000-000000000000`);
    expect(other.status).to.equal(404);
  });

  it('bad ranges are 400 (as the play log’s); the route needs plays:read', async () => {
    const station = await scene();
    expect((await get(station.id, '')).status).to.equal(400);
    expect((await get(station.id, `from=${at('10:00:00')}&to=${at('09:00:00')}`)).status).to.equal(400);
    expect((await get(station.id, `from=${at('10:00:00')}&to=${at('11:00:00')}&interval=week`)).status).to.equal(400);
    const res = await fetch(`${server.url}/admin/v1/stations/${station.id}/audience?from=${at('10:00:00')}&to=${at('11:00:00')}`);
    expect(res.status).to.equal(401);
  });

  describe('the edges of a window', () => {
    /** A station with one stream `mp3` and these samples (time of day, listeners), pushed as a CDN would (100 a batch). */
    async function samples(list: Array<[string, number]>) {
      const { station, ingestToken } = await ingestFixture(server.url, { rundownFollowing: false, profile: { streamUrls: [STREAMS[0]] } });
      for (let k = 0; k < list.length; k += 100) {
        const res = await pushSamples(server.url, station, ingestToken, {
          samples: list.slice(k, k + 100).map(([time, listeners]) => ({ stream: 'mp3', listeners, at: at(time) })),
        });
        expect(res.status, res.text).to.equal(200);
      }
      return station;
    }
    /** Every 20 s from `from` to `to` (both included), listeners by the sample's index. */
    const every20s = (from: string, to: string, listeners: (i: number) => number): Array<[string, number]> => {
      const list: Array<[string, number]> = [];
      for (let t = Date.parse(at(from)), i = 0; t <= Date.parse(at(to)); t += 20_000, i++)
        list.push([new Date(t).toISOString().slice(11, 19), listeners(i)]);
      return list;
    };

    it('a broadcast whose end falls on a sample: its last 20 s count', async () => {
      const station = await samples(every20s('10:00:00', '10:10:00', () => 100));
      const { broadcastId } = await insertBroadcast((server.svc as unknown as Services).db, {
        stationId: station.id,
        startsAt: new Date(at('10:00:00')),
        endsAt: new Date(at('10:10:00')),
      });
      const res = await get(station.id, `broadcastId=${broadcastId}`);
      expect(res.status, res.text).to.equal(200);
      // 100 listeners for the whole 10 minutes: 100 · 600 s. Samples in [from, to) alone gave 580 s (16.111).
      expect(res.body.total).to.deep.equal({ listenerHours: 16.667, peak: 100 });
    });

    it('a window whose edges fall between samples: the parts inside, interpolated; peaks only from samples inside', async () => {
      const station = await samples([
        ['10:00:00', 0],
        ['10:00:20', 120],
        ['10:00:40', 300],
      ]);
      const res = await get(station.id, `from=${at('10:00:05')}&to=${at('10:00:30')}`);
      expect(res.status, res.text).to.equal(200);
      // 10:00:05 → 10:00:20: (30+120)/2 · 15 = 1125; 10:00:20 → 10:00:30: (120+210)/2 · 10 = 1650; 2775 in all.
      expect(res.body.total).to.deep.equal({ listenerHours: 0.771, peak: 120 });
      expect(res.body.series[0].streams.mp3).to.deep.equal({ listenerHours: 0.771, peak: 120 });
    });

    it('a segment across an edge longer than 3 poll intervals is not counted (unknown), at either edge', async () => {
      // 3 poll intervals of 30 s: 90 s. 09:58:00 → 10:00:10 (130 s) and 10:00:30 → 10:02:10 (100 s) are gaps.
      const station = await samples([
        ['09:58:00', 100],
        ['10:00:10', 100],
        ['10:00:30', 100],
        ['10:02:10', 100],
      ]);
      const res = await get(station.id, `from=${at('10:00:00')}&to=${at('10:01:00')}`);
      expect(res.status, res.text).to.equal(200);
      // Only 10:00:10 → 10:00:30: 100 · 20 s.
      expect(res.body.total).to.deep.equal({ listenerHours: 0.556, peak: 100 });
      // No segment reaches a window between two samples of a gap: null, never 0.
      const gap = await get(station.id, `from=${at('10:00:40')}&to=${at('10:01:40')}`);
      expect(gap.body.total).to.deep.equal({ listenerHours: null, peak: null });
    });

    it('hour buckets add up to the whole range, which is the curve’s area inside it', async () => {
      const list = every20s('09:50:00', '11:10:00', (i) => (i * 37) % 50);
      const station = await samples(list);
      const from = at('10:00:07');
      const to = at('11:03:13');
      const hourly = await get(station.id, `from=${from}&to=${to}&interval=hour`);
      const daily = await get(station.id, `from=${from}&to=${to}&interval=day`);
      expect(hourly.status, hourly.text).to.equal(200);
      // The area by whole seconds of the piecewise-linear curve (exact: its corners fall on whole seconds).
      const points = list.map(([time, n]) => [Date.parse(at(time)), n] as const);
      const valueAt = (t: number) => {
        const k = points.findIndex(([pt]) => pt > t);
        const [t0, n0] = points[k - 1];
        const [t1, n1] = points[k];
        return n0 + ((n1 - n0) * (t - t0)) / (t1 - t0);
      };
      let area = 0;
      for (let t = Date.parse(from); t < Date.parse(to); t += 1000) area += valueAt(t + 500);
      const expected = Math.round((area / 3600) * 1000) / 1000;
      const buckets = hourly.body.series.map((b: { listenerHours: number }) => b.listenerHours);
      expect(buckets).to.have.length(2);
      expect(buckets[0] + buckets[1]).to.be.closeTo(expected, 0.0015);
      expect(hourly.body.total.listenerHours).to.equal(expected);
      expect(daily.body.total.listenerHours).to.equal(expected);
    });
  });
});
