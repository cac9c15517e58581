import { expect } from 'chai';
import { spawn } from 'node:child_process';
import { repoRoot as root } from '../support/processes.ts';
import { sharedServer } from '../support/server.ts';
import { admin } from '../support/http.ts';
import { ingest, ingestFixture } from '../support/ingest.ts';
import { testMode } from '../support/mode.ts';
import { png } from '../support/imageServer.ts';
import { uploaded } from '../domains/media/helpers.ts';

// `waveline artwork …`: the operator's artwork calls of the admin API spelled for the shell —
// pin, unpin, pins, block, unblock, blocks, recent — through the very same routes (validation, audit).

async function cli(args: string[]): Promise<{ code: number | null; out: string; err: string }> {
  const run = spawn(process.execPath, ['src/main.ts', 'artwork', ...args], {
    cwd: root,
    env: { ...process.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  run.stdout!.on('data', (d) => (out += d));
  run.stderr!.on('data', (d) => (err += d));
  const code = await new Promise<number | null>((ok) => run.on('exit', ok));
  return { code, out, err };
}

describe('waveline artwork (CLI)', function () {
  this.timeout(240_000);
  it('pins, lists, replaces and removes a pin; blocks and unblocks an image; shows what listeners saw; refuses bad input', async () => {
    const server = await sharedServer();
    const { station, ingestToken } = await ingestFixture(server.url, { rundownFollowing: false });
    // In the embedded test mode the CLI is a second process on this test process's PGlite session (its
    // DATABASE_URL is the test's socket), where a named statement this process prepared would be prepared
    // again by the CLI's own connection (42P05): a situation of the test harness only — a real `waveline
    // artwork` does not open a data directory `npm start` holds. So the played track, whose re-resolution
    // runs the named now-playing queries, is part of the services run.
    const played = testMode() === 'services';
    if (played) await ingest(server.url, station, ingestToken, { artist: 'Daft Punk', title: 'One More Time' });
    const art = await uploaded(server.url, station.id, await png(61, 640, 640), 'image/png');

    const pinned = await cli([
      'pin',
      station.id,
      'daft-punk',
      '--artist',
      'Daft Punk',
      '--title',
      'One More Time',
      '--version',
      art.versionId,
    ]);
    expect(pinned.code, pinned.out + pinned.err).to.equal(0);
    expect(JSON.parse(pinned.out)).to.deep.include({
      id: 'daft-punk',
      match: { artist: 'Daft Punk', title: 'One More Time' },
      image: { versionId: art.versionId },
      status: 'kept',
      reason: null,
    });
    const listed = await cli(['pins', station.id]);
    expect(listed.code).to.equal(0);
    expect(JSON.parse(listed.out).pins.map((p: { id: string }) => p.id)).to.deep.equal(['daft-punk']);
    const none = await cli(['pin', station.id, 'daft-punk', '--artist', 'Daft Punk', '--none']);
    expect(none.code, none.out + none.err).to.equal(0);
    expect(JSON.parse(none.out)).to.include({ id: 'daft-punk', image: null });
    expect(JSON.parse((await cli(['pins', station.id, 'daft-punk'])).out).match).to.deep.equal({ artist: 'Daft Punk' });

    // The API's own validation, named field and all; the exit status says it failed.
    const foreign = await cli(['pin', station.id, 'x', '--artist', 'X', '--version', '00000000-0000-4000-8000-000000000000']);
    expect(foreign.code).to.equal(1);
    expect(JSON.stringify(JSON.parse(foreign.out).error)).to.include('image.versionId');
    const malformed = await cli(['pin', station.id, 'x', '--artist', 'X', '--url', 'not a url']);
    expect(malformed.code).to.equal(1);
    expect(JSON.stringify(JSON.parse(malformed.out).error)).to.include('image.url');
    // A pin needs exactly one of --version, --url, --none: usage, exit 64, nothing sent.
    const ambiguous = await cli(['pin', station.id, 'x', '--artist', 'X', '--none', '--url', 'https://images.example.org/a.jpg']);
    expect(ambiguous.code).to.equal(64);
    expect(ambiguous.err).to.include('usage: waveline artwork');
    expect((await cli(['frobnicate', station.id])).code).to.equal(64);

    const blocked = await cli(['block', station.id, '--version', art.versionId]);
    expect(blocked.code, blocked.out + blocked.err).to.equal(0);
    const block = JSON.parse(blocked.out);
    expect(block.hash).to.match(/^[0-9a-f]{16}$/);
    expect(JSON.parse((await cli(['blocks', station.id])).out).blocks.map((b: { id: string }) => b.id)).to.deep.equal([block.id]);
    expect((await cli(['unblock', station.id, block.id])).code).to.equal(0);
    expect(JSON.parse((await cli(['blocks', station.id])).out).blocks).to.deep.equal([]);

    // What listeners saw: the track, hidden by the `--none` pin (no track in the embedded run).
    const recent = await cli(['recent', station.id, '--limit', '5']);
    expect(recent.code, recent.out + recent.err).to.equal(0);
    const tracks = JSON.parse(recent.out).tracks;
    expect(tracks).to.deep.equal(
      played
        ? [{ artist: 'Daft Punk', title: 'One More Time', lastPlayedAt: tracks[0]?.lastPlayedAt, plays: 1, artwork: null, rejected: [] }]
        : [],
    );

    expect((await cli(['unpin', station.id, 'daft-punk'])).code).to.equal(0);
    expect((await admin(server.url, 'GET', `/stations/${station.id}/artwork/pins/daft-punk`)).status).to.equal(404);
    // Audited like any admin call: the pin writes, the block and its removal.
    const actions = (await admin(server.url, 'GET', `/stations/${station.id}/audit`)).body.entries.map(
      (e: { action: string; status: number }) => `${e.action} ${e.status}`,
    );
    expect(actions).to.include.members([
      'artwork.pin 201',
      'artwork.pin 200',
      'artwork.block 201',
      'artwork.unblock 204',
      'artwork.unpin 204',
    ]);
  });
});
