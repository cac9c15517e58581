import { Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { expect } from 'chai';
import { useClockedServer } from '../../support/server.ts';
import { admin } from '../../support/http.ts';
import { ingestFixture } from '../../support/ingest.ts';
import { asciiField } from '../../../src/domains/audience/ascii.ts';
import { REPORT_COLUMNS, prepareReport, reportFileName, reportMonth, reportText } from '../../../src/domains/audience/report.ts';
import type { Services } from '../../../src/services.ts';
import { STREAMS, play, pushSamples } from './helpers.ts';

// docs/audience.md#filing-the-soundexchange-report-of-use: GET
// …/plays/report.txt?month=YYYY-MM&format=soundexchange — the census Report of Use: tab-separated ASCII
// (non-ASCII transliterated), the header row, one row per music play of the month in the station's time zone,
// the file name {serviceName}{YYYYMMDD}_{YYYYMMDD}_{category}.txt, ROYALTIES_NOT_CONFIGURED naming the
// missing settings, unknown performances empty and counted in X-Waveline-Unknown-Performances.

const T0 = new Date('2026-06-01T12:00:00Z');

async function text(stream: NodeJS.ReadableStream): Promise<string> {
  let out = '';
  await pipeline(stream, new Writable({ write: (chunk, _e, done) => ((out += chunk), done()) }));
  return out;
}

describe('audience: the SoundExchange report of use', () => {
  const { server } = useClockedServer(T0, { reset: true });
  const svc = () => server.svc as unknown as Services;

  it('transliterates to ASCII: accents dropped (NFKD), ß/æ/ø spelled out, other scripts "?", tabs and line breaks as spaces', () => {
    expect(asciiField('Beyoncé')).to.equal('Beyonce');
    expect(asciiField('Motörhead – Ace of Spades')).to.equal('Motorhead - Ace of Spades');
    expect(asciiField('Sigur Rós · Ágætis byrjun')).to.equal('Sigur Ros ? Agaetis byrjun');
    expect(asciiField('Die Ärzte: Straße')).to.equal('Die Arzte: Strasse');
    expect(asciiField('Ø\tfi\r\nﬁ “quoted”')).to.equal('O fi  fi "quoted"');
    expect(asciiField('坂本龍一 🎹')).to.equal('???? ?');
    expect(asciiField(null)).to.equal('');
  });

  it('the file name: service name (letters, digits, - and _), first and last local day, category', () => {
    const month = reportMonth('2026-02', 'America/Los_Angeles');
    expect(reportFileName({ serviceName: 'KXYZ Online Radio', transmissionCategory: 'C' }, month)).to.equal(
      'KXYZOnlineRadio20260201_20260228_C.txt',
    );
    expect(month.from.toISOString()).to.equal('2026-02-01T08:00:00.000Z');
    expect(month.to.toISOString()).to.equal('2026-03-01T08:00:00.000Z');
  });

  it('409 ROYALTIES_NOT_CONFIGURED naming the missing settings; 400 for a bad month or format', async () => {
    const { station } = await ingestFixture(server.url, { rundownFollowing: false });
    const res = await admin(server.url, 'GET', `/stations/${station.id}/plays/report.txt?month=2026-05&format=soundexchange`);
    expect(res.status).to.equal(409);
    expect(res.body.error.code).to.equal('ROYALTIES_NOT_CONFIGURED');
    expect(res.body.error.message).to.include('royalties.serviceName').and.include('royalties.transmissionCategory');
    for (const query of ['month=2026-13&format=soundexchange', 'month=2026-05&format=csv', 'month=2026-05']) {
      const bad = await admin(server.url, 'GET', `/stations/${station.id}/plays/report.txt?${query}`);
      expect(bad.status, query).to.equal(400);
    }
  });

  it('rows: one per play of the month in the station’s zone, tab-separated ASCII under the header row; unknown performances empty and counted', async () => {
    const { station, ingestToken } = await ingestFixture(server.url, {
      timezone: 'America/Los_Angeles',
      rundownFollowing: false,
      profile: { streamUrls: STREAMS },
    });
    // 2026-05-01T06:30Z is April 30 in Los Angeles: not in May's report; 2026-06-01T03:00Z is May 31 there: in it.
    await play(server.url, station, ingestToken, 'April night', Date.parse('2026-05-01T06:30:00Z'), { durationSeconds: 200 });
    await play(server.url, station, ingestToken, 'Crème brûlée', Date.parse('2026-05-01T07:30:00Z'), {
      artist: 'Björk',
      album: 'Début',
      isrc: 'GB-AAA-93-00001',
      durationSeconds: 200,
    });
    await play(server.url, station, ingestToken, 'Heard\ttwice', Date.parse('2026-06-01T03:00:00Z'), { durationSeconds: 200 });
    await play(server.url, station, ingestToken, 'June', Date.parse('2026-06-01T07:30:00Z'), { durationSeconds: 200 });
    const pushed = await pushSamples(server.url, station, ingestToken, {
      samples: [
        { stream: 'mp3', listeners: 12, at: '2026-06-01T03:01:00Z' },
        { stream: 'hls', listeners: 30, at: '2026-06-01T03:02:00Z' },
      ],
    });
    expect(pushed.status, pushed.text).to.equal(200);

    const month = reportMonth('2026-05', station.timezone);
    const unknown = await prepareReport(svc(), station.id, month);
    expect(unknown, 'Crème brûlée had no samples left (only pushed ones within 24 h exist)').to.equal(1);
    const body = await text(reportText(svc().db, station.id, { serviceName: 'KWAV Online', transmissionCategory: 'C' }, month));
    expect(/^[\x00-\x7f]*$/.test(body), 'ASCII only').to.equal(true);
    const lines = body.split('\r\n');
    expect(lines[0]).to.equal(REPORT_COLUMNS.join('\t'));
    expect(lines[0]).to.equal(
      'NAME_OF_SERVICE\tTRANSMISSION_CATEGORY\tFEATURED_ARTIST\tSOUND_RECORDING_TITLE\tISRC\tALBUM_TITLE\tMARKETING_LABEL\tACTUAL_TOTAL_PERFORMANCES',
    );
    expect(lines.slice(1)).to.deep.equal([
      'KWAV Online\tC\tBjork\tCreme brulee\tGBAAA9300001\tDebut\t\t',
      'KWAV Online\tC\tArtist\tHeard twice\t\t\t\t42',
      '',
    ]);
  });
});
