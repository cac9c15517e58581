import { expect } from 'chai';
import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startTestServer, type TestServer } from '../../support/server.ts';
import { eventually } from '../../support/factories.ts';
import { ingest, ingestFixture } from '../../support/ingest.ts';
import { FakeCatalogues } from '../../support/fakeCatalogues.ts';
import { requiresRedis } from '../../support/mode.ts';

// MusicBrainz asks every client for at most one request per second and a User-Agent with a contact
// (https://musicbrainz.org/doc/MusicBrainz_API/Rate_Limiting). Two real worker processes look artwork
// up at once against a local server speaking the catalogues' formats: their MusicBrainz requests are
// still a second apart (the pacing bucket lives in Redis), and every request names the operator's contact.

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');

function startWorker(env: Record<string, string>): { child: ChildProcess; ready: Promise<void>; exited: Promise<unknown> } {
  const child = spawn(process.execPath, ['src/main.ts', 'worker'], {
    cwd: root,
    env: { ...process.env, LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  const ready = new Promise<void>((ok) => child.stdout!.on('data', (d) => (out += d) && out.includes('workers ready') && ok()));
  child.stderr!.resume();
  return { child, ready, exited: new Promise((ok) => child.on('exit', ok)) };
}

describe('artwork: catalogue policies across every worker process', function () {
  this.timeout(60_000);
  const fake = new FakeCatalogues();
  let server: TestServer;
  let workers: Array<ReturnType<typeof startWorker>> = [];
  before(async function () {
    requiresRedis(this, 'two worker processes share one Redis limiter');
    await fake.start();
    const env = {
      ARTWORK_ITUNES_BASE_URL: fake.url,
      ARTWORK_MUSICBRAINZ_BASE_URL: fake.url,
      ARTWORK_COVERART_BASE_URL: fake.url,
      ARTWORK_CONTACT: 'ops@radio.example',
    };
    server = await startTestServer({ env });
    workers = [startWorker(env), startWorker(env)];
    await Promise.all(workers.map((w) => w.ready));
  });
  after(async () => {
    if (!server) return; // pending in embedded mode: nothing was started
    for (const w of workers) w.child.kill('SIGTERM');
    await Promise.all(workers.map((w) => w.exited));
    await server.close();
    await fake.stop();
  });

  it("two workers send MusicBrainz at most one request per second between them, each with the operator's contact in the User-Agent", async () => {
    fake.modes.itunes = 'miss'; // every lookup goes on to MusicBrainz
    const tracks = Array.from({ length: 5 }, () => {
      const cover = randomUUID();
      const track = {
        artist: 'Air',
        title: `La Femme d'Argent ${randomUUID().slice(0, 8)}`,
        album: 'Moon Safari',
        releaseIds: [cover],
        coverReleaseId: cover,
      };
      fake.tracks.push(track);
      return track;
    });
    const stations = await Promise.all(tracks.map(() => ingestFixture(server.url, { artworkLookup: true, rundownFollowing: false })));
    await Promise.all(
      tracks.map((t, i) => ingest(server.url, stations[i].station, stations[i].ingestToken, { artist: t.artist, title: t.title })),
    );
    const artwork = (stationId: string) =>
      server.svc
        .db('observations')
        .where({ station_id: stationId })
        .first()
        .then((row) => row?.catalogue_url ?? null); // a catalogue find is kept apart from the ingest's own URL
    await eventually(async () => (await Promise.all(stations.map((s) => artwork(s.station.id)))).every(Boolean), {
      timeoutMs: 30_000,
      intervalMs: 100,
    });

    const times = fake.arrivals.musicbrainz.map((a) => a.at).sort((a, b) => a - b);
    expect(times.length).to.be.at.least(5);
    const gaps = times.slice(1).map((t, i) => t - times[i]);
    expect(Math.min(...gaps), `gaps ${gaps.join(', ')} ms`).to.be.at.least(950);
    for (const provider of ['itunes', 'musicbrainz', 'coverart'] as const) {
      for (const { userAgent } of fake.arrivals[provider]) expect(userAgent, provider).to.equal('Waveline/0.1 ( ops@radio.example )');
    }
  });
});
