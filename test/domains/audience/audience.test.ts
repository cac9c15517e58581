import { expect } from 'chai';
import { useClockedServer } from '../../support/server.ts';
import { admin } from '../../support/http.ts';
import { ingestFixture } from '../../support/ingest.ts';
import { insertBroadcast } from '../../support/scheduleRows.ts';
import type { Services } from '../../../src/services.ts';
import { STREAMS, pushSamples } from './helpers.ts';

// decisions.md, "Audience": GET /admin/v1/stations/{id}/audience?from&to&interval&stream? (or broadcastId),
// scope plays:read: listener-hours by the trapezoid rule, a gap over 3 poll intervals unknown (not 0),
// samples counted when `at` lies in [from, to), an hour without data null (never 0), a partly covered
// hour sums what is known; peaks; per stream; `streams: {key: {lastSampleAt, lastError}}`.

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

  it('only samples in [from, to) count; stream= limits to one stream; an unknown stream is 400 naming stream', async () => {
    const station = await scene();
    const res = await get(station.id, `from=${at('10:00:30')}&to=${at('11:00:00')}&stream=mp3`);
    expect(res.status, res.text).to.equal(200);
    expect(res.body.series).to.have.length(1);
    // From 10:00:30: 20·30 + 30·30 = 1500 listener-seconds; the 10:59:45 → 11:00:15 segment has an end outside.
    expect(res.body.series[0].streams).to.deep.equal({ mp3: { listenerHours: 0.417, peak: 40 } });
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
    expect(res.body.total).to.deep.equal({ listenerHours: null, peak: 60 });
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
});
