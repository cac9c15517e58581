import { expect } from 'chai';
import { sharedServer, type TestServer } from '../support/server.ts';
import { putBroadcast, putProgram } from '../domains/schedule/helpers.ts';
import { createStation } from '../support/factories.ts';
import { ingest, ingestFixture } from '../support/ingest.ts';
import { closeTestGateways, realtimePath, startTestGateway, STATION_START_ROWS } from '../support/feed.ts';
import { Listener } from '../support/listenerTime.ts';
import { up as backfillStationRows } from '../../migrations/20261213010000_station_feed_rows_backfill.ts';

// docs/realtime.md#what-arrives: every station's feed holds its schedule, on-air and now-playing rows
// from its creation. Stations created before that rule get the missing ones from a data migration, in
// the shapes the presenters write for a new station, with the station's next feed seqs.

interface FeedRow {
  kind: string;
  entry: string;
  data: unknown;
  seq: number;
  deleted: boolean;
}

describe('feed rows backfill (migration): every existing station gets its schedule, on-air and now-playing rows', () => {
  let server: TestServer;
  before(async () => (server = await sharedServer()));
  after(closeTestGateways);

  const rowsOf = async (stationId: string): Promise<Map<string, FeedRow>> =>
    new Map(
      (
        (await server.svc.db('feed_rows').where({ station_id: stationId }).select('kind', 'entry', 'data', 'seq', 'deleted')) as FeedRow[]
      ).map((row) => [`${row.kind}:${row.entry}`, row]),
    );
  const seqOf = async (stationId: string): Promise<number> =>
    Number((await server.svc.db('stations').where({ id: stationId }).first<{ feed_seq: number }>('feed_seq')).feed_seq);
  /** A station as it was before the rule: its feed without the rows a creation now writes. */
  const asBefore = (stationId: string, kinds: string[]) =>
    server.svc.db('feed_rows').where({ station_id: stationId }).whereIn('kind', kinds).delete();

  it('writes the rows a creation writes (the same data, the station’s id and time zone), with the next seqs; a resume sees them as changes', async () => {
    const created = await createStation(server.url, { timezone: 'America/New_York' });
    const reference = await rowsOf(created.id);
    const old = await createStation(server.url, { timezone: 'America/New_York' });
    const gateway = await startTestGateway();
    const listener = await Listener.open('websocket', gateway.port, realtimePath(old.id));
    await listener.synced();
    const cursor = listener.lastCursor();
    listener.close();
    await gateway.close();
    await asBefore(old.id, ['schedule', 'on-air', 'now-playing']);
    const before = await seqOf(old.id);

    await backfillStationRows(server.svc.db);
    const rows = await rowsOf(old.id);
    expect([...rows.keys()].sort()).to.deep.equal([...STATION_START_ROWS].sort());
    for (const rowId of STATION_START_ROWS) {
      const expected = JSON.parse(JSON.stringify(reference.get(rowId)?.data ?? null).replaceAll(created.id, old.id));
      expect(rows.get(rowId)?.data, rowId).to.deep.equal(expected);
      expect(rows.get(rowId)?.deleted).to.equal(false);
    }
    expect([...rows.values()].map((r) => Number(r.seq)).sort()).to.deep.equal([before + 1, before + 2, before + 3]);
    expect(await seqOf(old.id)).to.equal(before + 3);

    // A client that held the old state resumes: three updates, no reset.
    const fresh = await startTestGateway();
    const back = await Listener.open('websocket', fresh.port, realtimePath(old.id), cursor);
    const synced = await back.synced();
    expect(Object.values(synced.data.data.states)).to.deep.equal(['resumed']);
    expect(back.messages.filter((m) => m.data.type === 'event').map((m) => m.data.data.payload.$id)).to.have.members([
      ...STATION_START_ROWS,
    ]);
    back.close();
  });

  it('leaves rows that exist alone, writes only the missing ones, and runs twice without writing anything more', async () => {
    const station = await createStation(server.url);
    const programId = await putProgram(server.url, station.id, { title: 'Show' });
    const fx = { station, token: '', presenterId: '', programId };
    await putBroadcast(server.url, fx, new Date(Date.now() + 3600_000).toISOString(), new Date(Date.now() + 7200_000).toISOString());
    const schedule = (await rowsOf(station.id)).get('schedule:current');
    expect((schedule?.data as { broadcasts: unknown[] }).broadcasts).to.have.length(1);
    await asBefore(station.id, ['now-playing']);

    await backfillStationRows(server.svc.db);
    const rows = await rowsOf(station.id);
    expect(rows.get('schedule:current')).to.deep.equal(schedule);
    expect((rows.get('now-playing:current')?.data as { freshness: { status: string } }).freshness.status).to.equal('empty');
    const seq = await seqOf(station.id);
    await backfillStationRows(server.svc.db);
    expect(await seqOf(station.id), 'nothing missing: nothing written').to.equal(seq);
  });

  it('gives no empty now-playing row to a station that has observations (ingest writes its row)', async () => {
    const { station, ingestToken } = await ingestFixture(server.url);
    expect((await ingest(server.url, station, ingestToken, { artist: 'A', title: 'Kept', durationSeconds: 200 })).status).to.equal(200);
    await asBefore(station.id, ['now-playing']);
    await backfillStationRows(server.svc.db);
    expect((await rowsOf(station.id)).has('now-playing:current')).to.equal(false);
  });
});
