import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { useClockedServer } from '../../support/server.ts';
import { admin, request } from '../../support/http.ts';
import { getSchedule, ids, putBroadcast, putBroadcastRaw, putPresenter, putProgram, scheduleFixture } from './helpers.ts';
import { invalidateReads } from '../../../src/lib/readCache.ts';

describe('schedule GET …/schedule', () => {
  const { clock, server } = useClockedServer('2026-06-10T10:00:00Z', { reset: true }); // 12:00 in Berlin

  it('defaults the window to today through today + 6 in the station time zone', async () => {
    const fx = await scheduleFixture(server.url);
    const firstMinute = await putBroadcast(server.url, fx, '2026-06-09T22:00:00Z', '2026-06-09T22:30:00Z'); // 10 Jun 00:00 local
    const lastDay = await putBroadcast(server.url, fx, '2026-06-16T21:00:00Z', '2026-06-16T21:30:00Z'); // 16 Jun 23:00 local
    await putBroadcast(server.url, fx, '2026-06-16T22:00:00Z', '2026-06-16T22:30:00Z'); // 17 Jun 00:00 local: outside
    await putBroadcast(server.url, fx, '2026-06-09T21:00:00Z', '2026-06-09T22:00:00Z'); // ends at the window start: outside
    const res = await getSchedule(server.url, fx);
    expect(res.status).to.equal(200);
    expect(res.body.contractVersion).to.equal(1);
    expect(res.body.timezone).to.equal('Europe/Berlin');
    expect(res.body.truncated).to.equal(false);
    expect(ids(res)).to.deep.equal([firstMinute, lastDay]);
    expect(res.body.broadcasts.map((b: { localDate: string }) => b.localDate)).to.deep.equal(['2026-06-10', '2026-06-16']);
  });

  it('throughDate defaults to fromDate + 6; both dates are inclusive', async () => {
    const fx = await scheduleFixture(server.url);
    const day1 = await putBroadcast(server.url, fx, '2026-07-01T08:00:00Z', '2026-07-01T09:00:00Z');
    const day7 = await putBroadcast(server.url, fx, '2026-07-07T20:00:00Z', '2026-07-07T21:00:00Z');
    await putBroadcast(server.url, fx, '2026-07-08T08:00:00Z', '2026-07-08T09:00:00Z');
    expect(ids(await getSchedule(server.url, fx, '?fromDate=2026-07-01'))).to.deep.equal([day1, day7]);
    expect(ids(await getSchedule(server.url, fx, '?fromDate=2026-07-07&throughDate=2026-07-07'))).to.deep.equal([day7]);
  });

  it('lists a broadcast overlapping the window edge, and one crossing local midnight on both days with the localDate of its start', async () => {
    const fx = await scheduleFixture(server.url);
    // 23:00 on 1 Jul to 01:00 on 2 Jul, Berlin (UTC+2).
    const late = await putBroadcast(server.url, fx, '2026-07-01T21:00:00Z', '2026-07-01T23:00:00Z');
    const first = await getSchedule(server.url, fx, '?fromDate=2026-07-01&throughDate=2026-07-01');
    const second = await getSchedule(server.url, fx, '?fromDate=2026-07-02&throughDate=2026-07-02');
    expect(ids(first)).to.deep.equal([late]);
    expect(ids(second)).to.deep.equal([late]);
    expect(second.body.broadcasts[0].localDate).to.equal('2026-07-01');
    expect(ids(await getSchedule(server.url, fx, '?fromDate=2026-07-03&throughDate=2026-07-03'))).to.deep.equal([]);
  });

  const dstDays = [
    // zone, local day, the day's first and last UTC instants ([start, end)), its length in hours
    { zone: 'Europe/Berlin', day: '2026-03-29', start: '2026-03-28T23:00:00Z', end: '2026-03-29T22:00:00Z', hours: 23 },
    { zone: 'Europe/Berlin', day: '2026-10-25', start: '2026-10-24T22:00:00Z', end: '2026-10-25T23:00:00Z', hours: 25 },
    { zone: 'America/New_York', day: '2026-03-08', start: '2026-03-08T05:00:00Z', end: '2026-03-09T04:00:00Z', hours: 23 },
    { zone: 'America/New_York', day: '2026-11-01', start: '2026-11-01T04:00:00Z', end: '2026-11-02T05:00:00Z', hours: 25 },
  ];
  for (const dst of dstDays) {
    it(`covers exactly the local day ${dst.day} in ${dst.zone} (${dst.hours} hours, DST-correct)`, async () => {
      const fx = await scheduleFixture(server.url, { timezone: dst.zone });
      const start = Date.parse(dst.start);
      const end = Date.parse(dst.end);
      const iso = (ms: number) => new Date(ms).toISOString();
      const min = 60_000;
      const before = await putBroadcast(server.url, fx, iso(start - 30 * min), iso(start)); // ends at the start
      const firstHalfHour = await putBroadcast(server.url, fx, iso(start), iso(start + 30 * min));
      const lastHalfHour = await putBroadcast(server.url, fx, iso(end - 30 * min), iso(end));
      const afterEnd = await putBroadcast(server.url, fx, iso(end), iso(end + 30 * min)); // starts at the end
      // What a fixed 24-hour day would wrongly include (23-hour day) or exclude (25-hour day):
      const naiveEdge = await putBroadcast(server.url, fx, iso(start + 23.5 * 3600_000), iso(start + 23.75 * 3600_000));
      const res = await getSchedule(server.url, fx, `?fromDate=${dst.day}&throughDate=${dst.day}`);
      expect(res.status).to.equal(200);
      const expected = dst.hours === 25 ? [firstHalfHour, naiveEdge, lastHalfHour] : [firstHalfHour, lastHalfHour];
      expect(ids(res)).to.deep.equal(expected);
      expect(ids(res)).to.not.include.members([before, afterEnd]);
      for (const b of res.body.broadcasts) {
        expect(b.localDate).to.equal(dst.day);
        expect(b.timezone).to.equal(dst.zone);
      }
      const nextDay = new Date(Date.parse(`${dst.day}T00:00:00Z`) + 86400_000).toISOString().slice(0, 10);
      const next = await getSchedule(server.url, fx, `?fromDate=${nextDay}&throughDate=${nextDay}`);
      expect(ids(next)).to.include(afterEnd);
      if (dst.hours === 23) expect(ids(next)).to.include(naiveEdge);
    });
  }

  it('derives status from the clock (scheduled, live, ended) unless cancelled', async () => {
    const fx = await scheduleFixture(server.url);
    const ended = await putBroadcast(server.url, fx, '2026-06-10T08:00:00Z', '2026-06-10T09:00:00Z');
    const live = await putBroadcast(server.url, fx, '2026-06-10T09:00:00Z', '2026-06-10T11:00:00Z');
    const scheduled = await putBroadcast(server.url, fx, '2026-06-10T11:00:00Z', '2026-06-10T12:00:00Z');
    const cancelled = await putBroadcast(server.url, fx, '2026-06-10T09:30:00Z', '2026-06-10T10:30:00Z', {
      cancellationReason: 'Football, sorry',
    });
    const flagged = await putBroadcast(server.url, fx, '2026-06-10T12:00:00Z', '2026-06-10T13:00:00Z', { cancelled: true });
    const byId = new Map((await getSchedule(server.url, fx)).body.broadcasts.map((b: { id: string }) => [b.id, b]));
    const status = (id: string) => (byId.get(id) as { status: string }).status;
    expect([status(ended), status(live), status(scheduled), status(cancelled), status(flagged)]).to.deep.equal([
      'ended',
      'live',
      'scheduled',
      'cancelled',
      'cancelled',
    ]);
    expect((byId.get(cancelled) as { cancellationReason: string }).cancellationReason).to.equal('Football, sorry');
    expect((byId.get(flagged) as { cancellationReason: string }).cancellationReason).to.equal('');
    expect((byId.get(live) as { cancellationReason: string }).cancellationReason).to.equal('');
    clock.set('2026-06-10T11:00:00Z');
    const later = new Map((await getSchedule(server.url, fx)).body.broadcasts.map((b: { id: string; status: string }) => [b.id, b.status]));
    expect([later.get(live), later.get(scheduled)]).to.deep.equal(['ended', 'live']);
  });

  it('presents each broadcast with its program, presenters (program default or override), nature, repeat link and exact resolution, sorted by startsAt', async () => {
    const fx = await scheduleFixture(server.url);
    const guest = await putPresenter(server.url, fx.station.id, 'Guest, "the" Host');
    const second = await putBroadcast(server.url, fx, '2026-06-11T08:00:00Z', '2026-06-11T09:00:00Z', {
      title: 'Special',
      nature: 'repeat',
      presenterIds: [guest],
    });
    const first = await putBroadcast(server.url, fx, '2026-06-11T06:00:00Z', '2026-06-11T07:00:00Z');
    await putBroadcast(
      server.url,
      fx,
      '2026-06-11T08:00:00Z',
      '2026-06-11T09:00:00Z',
      { title: 'Special', nature: 'repeat', presenterIds: [guest], repeatOfId: first },
      second,
    );
    const res = await getSchedule(server.url, fx);
    expect(ids(res)).to.deep.equal([first, second]);
    expect(res.body.broadcasts[0]).to.deep.equal({
      id: first,
      title: 'Morning Show',
      startsAt: '2026-06-11T06:00:00.000Z',
      endsAt: '2026-06-11T07:00:00.000Z',
      timezone: 'Europe/Berlin',
      localDate: '2026-06-11',
      resolution: 'exact',
      status: 'scheduled',
      cancellationReason: '',
      repeatOfId: null,
      nature: 'live',
      program: { id: fx.programId, title: 'Morning Show', profileId: null, image: null },
      presenters: [{ id: fx.presenterId, title: 'Ana Host', image: null }],
    });
    expect(res.body.broadcasts[1]).to.include({ title: 'Special', nature: 'repeat', repeatOfId: first });
    expect(res.body.broadcasts[1].presenters).to.deep.equal([{ id: guest, title: 'Guest, "the" Host', image: null }]);
    // A program rename shows on the next read where the broadcast has no own title.
    await putProgram(
      server.url,
      fx.station.id,
      { title: 'Breakfast', presenterIds: [fx.presenterId], profileId: 'morning-profile' },
      fx.programId,
    );
    const renamed = await getSchedule(server.url, fx);
    expect(renamed.body.broadcasts[0].title).to.equal('Breakfast');
    expect(renamed.body.broadcasts[0].program).to.deep.equal({
      id: fx.programId,
      title: 'Breakfast',
      profileId: 'morning-profile',
      image: null,
    });
    expect(renamed.body.broadcasts[1].title).to.equal('Special');
  });

  it('lists only published broadcasts', async () => {
    const fx = await scheduleFixture(server.url);
    const shown = await putBroadcast(server.url, fx, '2026-06-11T06:00:00Z', '2026-06-11T07:00:00Z');
    const draft = await putBroadcast(server.url, fx, '2026-06-11T08:00:00Z', '2026-06-11T09:00:00Z', { published: false });
    expect(ids(await getSchedule(server.url, fx))).to.deep.equal([shown]);
    await putBroadcast(server.url, fx, '2026-06-11T08:00:00Z', '2026-06-11T09:00:00Z', { published: true }, draft);
    expect(ids(await getSchedule(server.url, fx))).to.deep.equal([shown, draft]);
  });

  it('returns the first 1000 broadcasts by startsAt with truncated true when more exist', async () => {
    const fx = await scheduleFixture(server.url);
    // Bulk rows straight into the table: 1001 admin round trips would only slow the test down.
    const base = Date.parse('2026-06-11T00:00:00Z');
    const rows = Array.from({ length: 1001 }, (_, i) => ({
      id: randomUUID(),
      station_id: fx.station.id,
      program_id: fx.programId,
      starts_at: new Date(base + (1000 - i) * 60_000),
      ends_at: new Date(base + (1000 - i) * 60_000 + 30_000),
      nature: 'live',
    }));
    await server.svc.db.batchInsert('broadcasts', rows, 500);
    const res = await getSchedule(server.url, fx);
    expect(res.body.broadcasts).to.have.length(1000);
    expect(res.body.truncated).to.equal(true);
    const starts = res.body.broadcasts.map((b: { startsAt: string }) => Date.parse(b.startsAt));
    expect(starts[0]).to.equal(base);
    expect(starts[999]).to.equal(base + 999 * 60_000);
    expect([...starts].sort((a, b) => a - b)).to.deep.equal(starts);
    await server.svc.db('broadcasts').where({ id: rows[0].id }).delete(); // the latest one
    // Written behind the API's back: drop the cached answers as every schedule write does (lib/readCache.ts).
    await invalidateReads(server.svc, fx.station.id, 'schedule');
    const exact = await getSchedule(server.url, fx);
    expect(exact.body.broadcasts).to.have.length(1000);
    expect(exact.body.truncated).to.equal(false);
  });

  describe('bad input is 400 VALIDATION_ERROR with issues', () => {
    const cases: Array<[string, string, string]> = [
      ['an impossible date', '?fromDate=2026-02-30', 'fromDate'],
      ['a malformed date', '?fromDate=2026-6-1', 'fromDate'],
      ['a word for a date', '?throughDate=tomorrow', 'throughDate'],
      ['throughDate before fromDate', '?fromDate=2026-06-10&throughDate=2026-06-09', 'throughDate'],
      ['a window of 32 days', '?fromDate=2026-01-01&throughDate=2026-02-01', 'throughDate'],
      ['throughDate before the default fromDate (today)', '?throughDate=2026-06-01', 'throughDate'],
      ['an unknown parameter', '?fromDate=2026-06-10&limit=5', 'limit'],
    ];
    for (const [what, query, path] of cases) {
      it(what, async () => {
        const fx = await scheduleFixture(server.url);
        for (const route of ['schedule', 'programs', 'schedule.ics']) {
          const res = await request(server.url, 'GET', `/api/v1/stations/${fx.station.slug}/${route}${query}`, { token: fx.token });
          expect(res.status, `${route} ${res.text}`).to.equal(400);
          expect(res.body.error.code).to.equal('VALIDATION_ERROR');
          expect(res.body.error.issues.map((i: { path: string }) => i.path)).to.include(path);
        }
      });
    }

    it('suggests the parameter meant, and accepts exactly 31 days', async () => {
      const fx = await scheduleFixture(server.url);
      const typo = await getSchedule(server.url, fx, '?fromdate=2026-06-10');
      expect(typo.status).to.equal(400);
      expect(typo.body.error.issues[0]).to.include({ path: 'fromdate', suggestion: 'fromDate' });
      const full = await getSchedule(server.url, fx, '?fromDate=2026-01-01&throughDate=2026-01-31');
      expect(full.status).to.equal(200);
    });
  });

  it('answers 304 to a matching If-None-Match, and 404 MODULE_DISABLED when the schedule module is off', async () => {
    const fx = await scheduleFixture(server.url);
    await putBroadcast(server.url, fx, '2026-06-11T06:00:00Z', '2026-06-11T07:00:00Z');
    const first = await getSchedule(server.url, fx);
    const etag = first.headers.get('etag') as string;
    expect(etag).to.match(/^"[0-9a-f]{64}"$/);
    expect(first.headers.get('cache-control')).to.equal('no-store');
    const again = await request(server.url, 'GET', `/api/v1/stations/${fx.station.slug}/schedule`, {
      token: fx.token,
      headers: { 'if-none-match': etag },
    });
    expect(again.status).to.equal(304);
    expect(
      (await request(server.url, 'GET', `/api/v1/stations/${fx.station.slug}/schedule`, { headers: { 'if-none-match': etag } })).status,
    ).to.equal(401);
    await admin(server.url, 'PATCH', `/stations/${fx.station.id}`, { modules: { schedule: false } });
    const off = await getSchedule(server.url, fx);
    expect(off.status).to.equal(404);
    expect(off.body.error.code).to.equal('MODULE_DISABLED');
  });

  it('does not list another station’s broadcasts', async () => {
    const a = await scheduleFixture(server.url);
    const b = await scheduleFixture(server.url);
    const own = await putBroadcast(server.url, a, '2026-06-11T06:00:00Z', '2026-06-11T07:00:00Z');
    await putBroadcast(server.url, b, '2026-06-11T06:00:00Z', '2026-06-11T07:00:00Z');
    expect(ids(await getSchedule(server.url, a))).to.deep.equal([own]);
    const foreign = await putBroadcastRaw(server.url, b.station.id, {
      programId: a.programId,
      startsAt: '2026-06-11T06:00:00Z',
      endsAt: '2026-06-11T07:00:00Z',
      nature: 'live',
    });
    expect(foreign.status).to.equal(400);
  });
});
