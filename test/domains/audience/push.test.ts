import { expect } from 'chai';
import { useClockedServer } from '../../support/server.ts';
import { createToken } from '../../support/factories.ts';
import { ingestFixture } from '../../support/ingest.ts';
import { request } from '../../support/http.ts';
import { LISTENERS_PATH, STREAMS, pushSamples, storedSamples } from './helpers.ts';

// docs/audience.md#hls-a-cdn-or-anything-else-push-the-counts: pushed samples on POST
// /api/v1/integrations/listeners (ingest:write), 1–100, `at` within the last 24 h and not in the future, the
// same (stream, at) replaces, errors in the ingest route's body naming the sample's index, a refused batch
// stores nothing.

const T0 = new Date('2026-06-01T12:00:00Z');
const iso = (ms: number) => new Date(ms).toISOString();

describe('audience: pushed listener samples', () => {
  const { server } = useClockedServer(T0, { reset: true });
  const fixture = () => ingestFixture(server.url, { rundownFollowing: false, profile: { streamUrls: STREAMS } });

  it('stores the samples (200 {accepted}); the same (stream, at) again replaces the sample', async () => {
    const { station, ingestToken } = await fixture();
    const first = await pushSamples(server.url, station, ingestToken, {
      samples: [
        { stream: 'hls', listeners: 120, at: iso(T0.getTime() - 60_000) },
        { stream: 'mp3', listeners: 7, at: iso(T0.getTime() - 60_000) },
      ],
    });
    expect(first.status, first.text).to.equal(200);
    expect(first.body).to.deep.equal({ accepted: 2 });
    const again = await pushSamples(server.url, station, ingestToken, {
      samples: [{ stream: 'hls', listeners: 130, at: T0.getTime() - 60_000 }],
    });
    expect(again.status, again.text).to.equal(200);
    const rows = await storedSamples(server.svc, station.id);
    expect(rows.map((r) => [r.stream_key, r.listeners, r.source])).to.deep.equal([
      ['hls', 130, 'push'],
      ['mp3', 7, 'push'],
    ]);
  });

  it('an unknown stream → 400 naming the index and the station’s keys; the whole batch is refused and nothing is stored', async () => {
    const { station, ingestToken } = await fixture();
    const res = await pushSamples(server.url, station, ingestToken, {
      samples: [
        { stream: 'mp3', listeners: 3, at: iso(T0.getTime()) },
        { stream: 'dab', listeners: 5, at: iso(T0.getTime()) },
      ],
    });
    expect(res.status).to.equal(400);
    expect(res.body.error)
      .to.match(/^samples\.1\.stream/)
      .and.to.include('mp3, hls');
    expect(await storedSamples(server.svc, station.id)).to.have.length(0);
  });

  it('`at` more than 24 h ago or in the future → 400 naming the index; bad timestamps too', async () => {
    const { station, ingestToken } = await fixture();
    const cases: Array<[unknown, RegExp]> = [
      [iso(T0.getTime() - 24 * 3600_000 - 1000), /samples\.0\.at is more than 24 hours ago/],
      [iso(T0.getTime() + 60_000), /samples\.0\.at is in the future/],
      ['2026-06-01T11:00:00', /samples\.0\.at must be an ISO 8601 timestamp with a time zone/],
      ['yesterday', /samples\.0\.at must be an ISO 8601 timestamp/],
    ];
    for (const [at, message] of cases) {
      const res = await pushSamples(server.url, station, ingestToken, { samples: [{ stream: 'mp3', listeners: 1, at }] });
      expect(res.status, String(at)).to.equal(400);
      expect(res.body.error).to.match(message);
    }
    expect(await storedSamples(server.svc, station.id)).to.have.length(0);
  });

  it('1 to 100 samples, listeners a whole number ≥ 0; errors use the ingest body {error}', async () => {
    const { station, ingestToken } = await fixture();
    const sample = { stream: 'mp3', listeners: 1, at: iso(T0.getTime()) };
    for (const body of [
      { samples: [] },
      { samples: Array(101).fill(sample) },
      { samples: [{ ...sample, listeners: -1 }] },
      { samples: [{ ...sample, listeners: 1.5 }] },
      {},
    ]) {
      const res = await pushSamples(server.url, station, ingestToken, body);
      expect(res.status, JSON.stringify(body).slice(0, 80)).to.equal(400);
      expect(res.body).to.have.keys('error');
      expect(res.body.error).to.be.a('string');
    }
    const hundred = Array.from({ length: 100 }, (_, i) => ({ stream: 'mp3', listeners: i, at: iso(T0.getTime() - i * 1000) }));
    const ok = await pushSamples(server.url, station, ingestToken, { samples: hundred });
    expect(ok.status, ok.text).to.equal(200);
    expect(ok.body.accepted).to.equal(100);
  });

  it('needs an ingest:write credential of that station (401 otherwise)', async () => {
    const { station, listenerToken } = await fixture();
    const other = await fixture();
    const body = { samples: [{ stream: 'mp3', listeners: 1, at: iso(T0.getTime()) }] };
    expect((await pushSamples(server.url, station, listenerToken, body)).status).to.equal(401);
    expect((await pushSamples(server.url, station, other.ingestToken, body)).status).to.equal(401);
    const noAuth = await request(server.url, 'POST', `${LISTENERS_PATH}?stationSlug=${station.slug}`, { json: body });
    expect(noAuth.status).to.equal(401);
    expect(noAuth.body).to.have.keys('error');
    const { token } = await createToken(server.url, station.id, ['ingest:write']);
    expect((await pushSamples(server.url, station, token, body)).status).to.equal(200);
  });
});
