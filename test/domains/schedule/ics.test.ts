import { expect } from 'chai';
import ical from 'node-ical';
import { useClockedServer } from '../../support/server.ts';
import { admin, request } from '../../support/http.ts';
import { putBroadcast, putPresenter, scheduleFixture, type ScheduleFixture } from './helpers.ts';

const vevents = (text: string): ical.VEvent[] =>
  Object.values(ical.sync.parseICS(text)).filter((c): c is ical.VEvent => c?.type === 'VEVENT');

describe('calendar GET …/schedule.ics', () => {
  const { server } = useClockedServer('2026-06-10T10:00:00Z');

  const getIcs = (fx: ScheduleFixture, query = '', headers: Record<string, string> = {}) =>
    request(server.url, 'GET', `/api/v1/stations/${fx.station.slug}/schedule.ics${query}`, { token: fx.token, headers });

  it('is RFC 5545 text that node-ical parses: one VEVENT per broadcast, stable UIDs, UTC times, cancelled ones STATUS:CANCELLED', async () => {
    const fx = await scheduleFixture(server.url, { name: 'Radio; Wave, Line' });
    const guest = await putPresenter(server.url, fx.station.id, 'Zoë Ünal');
    const tricky =
      'News; weather, traffic \\ and more\nsecond line — with a long title that must be folded because it goes on and on and on ✓✓✓✓✓✓✓✓✓✓';
    const a = await putBroadcast(server.url, fx, '2026-06-11T06:00:00Z', '2026-06-11T07:00:00Z', {
      title: tricky,
      presenterIds: [fx.presenterId, guest],
    });
    const b = await putBroadcast(server.url, fx, '2026-06-12T21:30:00Z', '2026-06-12T23:30:00Z', { cancellationReason: 'Match overran' });
    await putBroadcast(server.url, fx, '2026-06-12T08:00:00Z', '2026-06-12T09:00:00Z', { published: false });

    const res = await getIcs(fx);
    expect(res.status).to.equal(200);
    expect(res.headers.get('content-type')).to.equal('text/calendar; charset=utf-8');
    expect(res.headers.get('etag')).to.match(/^"[0-9a-f]{64}"$/);
    expect(res.headers.get('access-control-allow-origin')).to.equal('*');

    const text = res.text;
    expect(text.startsWith('BEGIN:VCALENDAR\r\n')).to.equal(true);
    expect(text.endsWith('END:VCALENDAR\r\n')).to.equal(true);
    const lines = text.split('\r\n');
    expect(lines.pop()).to.equal('');
    expect(text.indexOf('X-WR-TIMEZONE'), 'calendar properties come before the components').to.be.lessThan(text.indexOf('BEGIN:VEVENT'));
    expect(text.replace(/\r\n/g, ''), 'every line ends in CRLF').to.not.match(/[\r\n]/);
    for (const line of lines) expect(Buffer.byteLength(line, 'utf8'), line).to.be.at.most(75);
    const unfolded = text.replace(/\r\n[ \t]/g, '');
    expect(unfolded).to.include('SUMMARY:News\\; weather\\, traffic \\\\ and more\\nsecond line');
    expect(unfolded).to.include('X-WR-TIMEZONE:Europe/Berlin');
    expect(unfolded).to.include('X-WR-CALNAME:Radio\\; Wave\\, Line');
    expect(unfolded).to.include('DTSTART:20260611T060000Z');
    expect(unfolded).to.include('DTEND:20260611T070000Z');

    const events = vevents(text);
    expect(events.map((e) => e.uid).sort()).to.deep.equal([`${a}@waveline`, `${b}@waveline`].sort());
    const first = events.find((e) => e.uid === `${a}@waveline`) as ical.VEvent;
    expect(first.start.toISOString()).to.equal('2026-06-11T06:00:00.000Z');
    expect(first.end?.toISOString()).to.equal('2026-06-11T07:00:00.000Z');
    expect(String(first.summary)).to.equal(tricky);
    expect(String(first.description)).to.equal('Program: Morning Show\nPresenters: Ana Host, Zoë Ünal');
    expect(first.status).to.equal('CONFIRMED');
    expect(first.lastmodified).to.be.instanceOf(Date);
    const cancelled = events.find((e) => e.uid === `${b}@waveline`) as ical.VEvent;
    expect(cancelled.status).to.equal('CANCELLED');

    const again = await getIcs(fx);
    expect(again.text, 'the same schedule gives the same text').to.equal(text);
  });

  it('uses the schedule window (query and defaults) and answers 304 to a matching If-None-Match after authenticating', async () => {
    const fx = await scheduleFixture(server.url);
    const inJuly = await putBroadcast(server.url, fx, '2026-07-01T06:00:00Z', '2026-07-01T07:00:00Z');
    expect(vevents((await getIcs(fx)).text)).to.have.length(0);
    const july = await getIcs(fx, '?fromDate=2026-07-01&throughDate=2026-07-01');
    expect(vevents(july.text).map((e) => e.uid)).to.deep.equal([`${inJuly}@waveline`]);
    const etag = july.headers.get('etag') as string;
    const notModified = await getIcs(fx, '?fromDate=2026-07-01&throughDate=2026-07-01', { 'if-none-match': etag });
    expect(notModified.status).to.equal(304);
    expect(notModified.text).to.equal('');
    const anonymous = await request(server.url, 'GET', `/api/v1/stations/${fx.station.slug}/schedule.ics`, {
      headers: { 'if-none-match': etag },
    });
    expect(anonymous.status).to.equal(401);
    await putBroadcast(server.url, fx, '2026-07-01T06:00:00Z', '2026-07-01T07:30:00Z', {}, inJuly);
    expect(
      (await getIcs(fx, '?fromDate=2026-07-01&throughDate=2026-07-01', { 'if-none-match': etag })).status,
      'a change gives a new ETag',
    ).to.equal(200);
  });

  it('uses the calendar module switch', async () => {
    const fx = await scheduleFixture(server.url);
    await admin(server.url, 'PATCH', `/stations/${fx.station.id}`, { modules: { calendar: false } });
    const res = await getIcs(fx);
    expect(res.status).to.equal(404);
    expect(res.body.error.code).to.equal('MODULE_DISABLED');
  });
});
