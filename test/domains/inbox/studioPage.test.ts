import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import type { Browser, HTTPRequest, Page } from 'puppeteer-core';
import { startTestServer, type TestServer } from '../../support/server.ts';
import { startTcpProxy, type TcpProxy } from '../../support/tcpProxy.ts';
import { admin } from '../../support/http.ts';
import { eventually } from '../../support/factories.ts';
import { launchBrowser, pageEventually, recordConsole, type ConsoleEntry } from '../../support/browser.ts';
import { inboxFixture, operatorKey, type InboxFixture } from './helpers.ts';

// Browser globals, used inside page.evaluate() callbacks only (the project is type-checked without the DOM library).
declare const document: any, window: any, sessionStorage: any, localStorage: any, getComputedStyle: any;

// docs/inbox.md, "The studio page": /admin/studio/inbox in Debian's Chromium (puppeteer-core), reached
// through a TCP relay (so a test can drop its connections). The key is typed into the page once; a
// listener's POST (real HTTP) appears live, the buttons change what the API stores, a ban takes effect,
// markup shows as text; no key in any URL, no request to any other host.
// INBOX_SCREENSHOT=<file.png> saves the page (npm run docs:screenshot:inbox → docs/inbox-studio.png).

interface MessageView {
  present: boolean;
  visible: boolean;
  status: string;
  statusText: string;
  text: string;
  textChildren: number;
  sender: string;
  track: string | null;
  policy: string;
  policyState: string;
  banned: boolean;
}

/** What the page shows of a message, by id (run in the page). */
function readMessage(id: string): MessageView {
  const el = document.querySelector(`li.message[data-id="${id}"]`);
  if (!el) return { present: false } as MessageView;
  const q = (selector: string) => el.querySelector(selector);
  const track = q('.track');
  return {
    present: true,
    visible: getComputedStyle(el).display !== 'none',
    status: el.dataset.status,
    statusText: q('.status').textContent,
    text: q('.text').textContent,
    textChildren: q('.text').children.length,
    sender: q('.sender').textContent,
    track: track.hidden ? null : track.textContent,
    policy: q('.policy').textContent,
    policyState: q('.policy').dataset.state,
    banned: !q('.banned').hidden,
  };
}

describe('inbox: the studio page in a real browser (/admin/studio/inbox)', function () {
  this.timeout(120_000);
  let server: TestServer;
  let relay: TcpProxy;
  let base: string;
  let f: InboxFixture;
  let key: string;
  let browser: Browser;
  let page: Page;
  let consoleEntries: ConsoleEntry[];
  const requests: HTTPRequest[] = [];
  const pageUrls: string[] = [];
  const ids: Record<string, string> = {};
  /** The banned listener's clientId (the ban tests). */
  const trollId = { value: '' };
  let address = 10;
  /** When the page held a wrong key (its 401s are expected then). */
  const wrongKey = { from: 0, to: 0 };
  /** A listener's send from an address of its own (a ban takes the client's and the address's). */
  const send = async (body: Record<string, unknown>) => {
    const res = await f.send({ clientId: randomUUID(), ...body }, { address: `198.51.100.${address++}` });
    expect(res.status, res.text).to.equal(202);
    return res.body.id as string;
  };
  const view = (id: string) => page.evaluate(readMessage, id);
  /** The page's view of a message once `accept` takes it (polled every 10 ms). */
  const until = async (id: string, accept: (v: MessageView) => boolean, timeoutMs = 5000): Promise<MessageView> =>
    (await eventually(
      async () => {
        const v = await view(id);
        return accept(v) ? v : null;
      },
      { timeoutMs, intervalMs: 10 },
    ))!;
  const stored = async (id: string) => (await f.list()).find((m: { id: string }) => m.id === id);

  before(async () => {
    server = await startTestServer();
    relay = await startTcpProxy({ host: '127.0.0.1', port: Number(new URL(server.url).port) });
    base = `http://127.0.0.1:${relay.port}`;
    f = await inboxFixture(server.url, null, { inbox: { perClientPerHour: 60, trackRepeatMinutes: 0, artistRepeatMinutes: 0 } });
    key = await operatorKey(server.url, [f.station.id], ['inbox:read', 'inbox:write']);
    // Before the page opens: two requests, one for a track played since (the policy now refuses it).
    await f.play('Daft Punk', 'Digital Love');
    ids.played = await send({
      kind: 'request',
      track: { artist: 'Daft Punk', title: 'Digital Love' },
      text: 'For the night shift!',
      name: 'Jonas',
    });
    ids.free = await send({ kind: 'request', track: { artist: 'Air', title: 'Sexy Boy' }, name: 'Lea', location: 'Hamburg' });
    await f.settings({ trackRepeatMinutes: 180, artistRepeatMinutes: 60 });
    ids.dedication = await send({
      kind: 'dedication',
      text: 'For my sister Anna, who turns 30 today — happy birthday from all of us!',
      name: 'Mia',
      location: 'Leipzig',
    });

    browser = await launchBrowser();
    page = await browser.newPage();
    await page.setViewport({ width: 1100, height: 1000 });
    consoleEntries = recordConsole(page);
    page.on('request', (req) => void requests.push(req));
    page.on('framenavigated', (frame) => void pageUrls.push(frame.url()));
  });

  after(async () => {
    await browser?.close();
    await relay?.close();
    await server?.close();
  });

  it('serves the page without a key, with a strict Content-Security-Policy and its own assets only; a key in the URL is refused', async () => {
    const res = await fetch(`${server.url}/admin/studio/inbox?station=${f.station.id}`);
    expect(res.status).to.equal(200);
    expect(res.headers.get('content-type')).to.equal('text/html; charset=utf-8');
    const csp = res.headers.get('content-security-policy') ?? '';
    expect(csp).to.include("default-src 'none'").and.include("script-src 'self'").and.include("connect-src 'self'");
    expect(csp).to.not.include('unsafe-inline');
    expect(res.headers.get('referrer-policy')).to.equal('no-referrer');
    const html = await res.text();
    const urls = [...html.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1]);
    expect(urls.sort()).to.deep.equal(['/admin/studio/assets/inbox.css', '/admin/studio/assets/inbox.js', 'data:,']);
    expect(html, 'no inline script or style').to.not.match(/<script>|<style|style="/);
    for (const url of urls.filter((u) => u.startsWith('/'))) {
      const file = await fetch(server.url + url);
      expect(file.status, url).to.equal(200);
      const etag = file.headers.get('etag');
      expect((await fetch(server.url + url, { headers: { 'If-None-Match': etag! } })).status, url).to.equal(304);
    }
    expect((await fetch(`${server.url}/admin/studio/assets/inbox.html`)).status).to.equal(404);
    expect((await fetch(`${server.url}/admin/studio/assets/..%2FstudioPage.ts`)).status).to.equal(404);
    for (const query of [`?station=${f.station.id}&key=${key}`, '?station=a%20b', `?token=${key}`]) {
      const refused = await fetch(`${server.url}/admin/studio/inbox${query}`);
      expect(refused.status, query).to.equal(400);
      expect(await refused.text(), 'the answer does not echo it').to.not.include(key);
    }
    const doc = (await (await fetch(`${server.url}/openapi.json`)).json()) as { paths: Record<string, unknown> };
    expect(doc.paths).to.have.property('/admin/studio/inbox');
  });

  it('the key pasted once (sessionStorage only): the list with the requests’ policy, a listener’s POST live within 2 s, answered, ban, markup as text', async () => {
    await page.goto(`${base}/admin/studio/inbox?station=${f.station.id}`, { waitUntil: 'load' });
    const apiCalls = () => requests.filter((r) => new URL(r.url()).pathname.startsWith('/admin/v1/'));
    expect(apiCalls(), 'the page asks nothing before it has a key').to.deep.equal([]);
    await page.type('#key', key);
    await page.click('#connect button[type=submit]');
    await pageEventually(
      page,
      () => document.getElementById('live').dataset.state,
      (s) => s === 'live',
      5000,
      'the stream',
    );
    expect(await page.evaluate(() => document.getElementById('key').value), 'the field is emptied').to.equal('');

    // The list, with each request's track and the policy's verdict now.
    const played = await until(ids.played, (v) => v.present && v.policyState !== 'unknown');
    expect(played.track).to.include('Daft Punk – Digital Love');
    expect(played.policyState).to.equal('refused');
    expect(played.policy).to.match(/^played too recently · allowed in 2 h 5\d min|^played too recently · allowed in 3 h$/);
    expect(played.text).to.equal('For the night shift!');
    const free = await until(ids.free, (v) => v.policyState === 'allowed');
    expect(free).to.deep.include({ policy: 'allowed now', status: 'pending', statusText: 'new', sender: 'Lea, Hamburg' });
    expect((await view(ids.dedication)).text).to.equal('For my sister Anna, who turns 30 today — happy birthday from all of us!');

    // A listener's POST appears within 2 s.
    const sentAt = Date.now();
    ids.live = await send({ kind: 'message', text: 'Greetings from the night shift at the bakery — more 80s please!', name: 'Ben' });
    const appeared = await until(ids.live, (v) => v.present, 2000);
    expect(Date.now() - sentAt, 'within 2 s of the POST').to.be.below(2000);
    expect(appeared).to.deep.include({ status: 'pending', sender: 'Ben' });

    // "Answered": the API stores it, the page shows it.
    await page.click(`li.message[data-id="${ids.live}"] button[data-status=answered]`);
    await eventually(async () => (await stored(ids.live))?.status === 'answered');
    await until(ids.live, (v) => v.statusText === 'answered');
    expect(
      await page.evaluate(
        (id: string) => document.querySelector(`li[data-id="${id}"] button[data-status=answered]`).getAttribute('aria-pressed'),
        ids.live,
      ),
    ).to.equal('true');

    // A ban (two clicks): the message is hidden, and what its sender sends next is stored hidden and not shown.
    const troll = randomUUID();
    trollId.value = troll;
    ids.troll = await send({ clientId: troll, kind: 'message', text: 'BUY FOLLOWERS NOW' });
    await until(ids.troll, (v) => v.present);
    await page.click(`li.message[data-id="${ids.troll}"] button.ban`);
    await page.click(`li.message[data-id="${ids.troll}"] button.ban`);
    await eventually(async () => (await admin(server.url, 'GET', `/stations/${f.station.id}/inbox/bans`)).body.bans.length === 1);
    await eventually(async () => (await stored(ids.troll))?.status === 'hidden');
    await until(ids.troll, (v) => v.visible === false);
    ids.trollAgain = await send({ clientId: troll, kind: 'message', text: 'I am back' });
    expect((await stored(ids.trollAgain)).status, 'stored hidden').to.equal('hidden');
    ids.after = await send({ kind: 'message', text: 'Lovely show tonight.', name: 'Sam' });
    await until(ids.after, (v) => v.present, 2000);
    // The stream is in order: the banned sender's second message came before, and is not shown.
    const again = await view(ids.trollAgain);
    expect(again.visible, 'hidden messages are not shown').to.equal(false);
    expect(again.banned).to.equal(true);
    await page.click('#show-hidden');
    expect(await view(ids.trollAgain)).to.deep.include({ visible: true, statusText: 'hidden', text: 'I am back' });
    await page.click('#show-hidden');

    // Markup is text: nothing runs, nothing loads.
    const markup = '<script>window.__pwned = 1</script><img src="/x-injected" onerror="window.__pwned = 2"> Hi! <b>bold?</b>';
    ids.markup = await send({ kind: 'message', text: markup, name: '<i>Mallory</i>' });
    const shownMarkup = await until(ids.markup, (v) => v.present, 2000);
    expect(shownMarkup.text).to.equal(markup);
    expect(shownMarkup.textChildren).to.equal(0);
    expect(shownMarkup.sender).to.equal('<i>Mallory</i>');
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(await page.evaluate(() => window.__pwned)).to.equal(undefined);
    expect(requests.map((r) => r.url()).filter((u) => u.includes('x-injected'))).to.deep.equal([]);

    // Where the key is, and is not.
    const kept = await page.evaluate(() => ({
      session: sessionStorage.getItem('waveline.studio.key'),
      local: localStorage.length,
      cookie: document.cookie,
    }));
    expect(kept).to.deep.equal({ session: key, local: 0, cookie: '' });
  });

  it('lifts a ban from the page: the list of bans in force, or the banned listener’s message; what they send next arrives as anyone’s', async () => {
    const banRows = () =>
      page.evaluate(() =>
        [...document.querySelectorAll('#bans li.ban-entry')].map((li: any) => ({
          id: li.dataset.id,
          client: li.querySelector('.client').textContent,
          until: li.querySelector('.until').textContent,
        })),
      );
    const bansInForce = async () => (await admin(server.url, 'GET', `/stations/${f.station.id}/inbox/bans`)).body.bans;
    // The ban of the previous test, in the page's list of bans (as the API lists it).
    const [troll] = await bansInForce();
    await page.click('#bans-panel summary');
    const rows = await pageEventually(
      page,
      () => document.querySelectorAll('#bans li.ban-entry').length,
      (n) => n === 1,
      5000,
      'the ban listed',
    );
    expect(rows).to.equal(1);
    const [row] = await banRows();
    expect(row.id).to.equal(troll.id);
    expect(row.client).to.equal(troll.client);
    expect(row.until)
      .to.match(/^until /)
      .and.not.equal('until lifted');
    expect(await page.evaluate(() => document.getElementById('ban-count').textContent)).to.equal('1');

    if (process.env.INBOX_SCREENSHOT) {
      await page.evaluate(() => window.scrollTo(0, 0));
      await page.screenshot({ path: process.env.INBOX_SCREENSHOT as string });
    }

    // Lifted from the list: the API has no ban left, the page marks nobody, and the listener's next
    // message is stored pending and shown. (The messages the ban hid stay hidden.)
    await page.click(`#bans li.ban-entry[data-id="${troll.id}"] button.lift`);
    await eventually(async () => (await bansInForce()).length === 0);
    await pageEventually(
      page,
      () => document.querySelectorAll('#bans li.ban-entry').length,
      (n) => n === 0,
      5000,
      'the list emptied',
    );
    await until(ids.trollAgain, (v) => v.banned === false);
    expect(await page.evaluate(() => document.getElementById('notice').textContent)).to.match(/lifted/);
    const trollClient = (await stored(ids.troll)).client;
    const welcome = await f.send({ clientId: trollId.value, kind: 'message', text: 'Sorry about before.' }, { address: '198.51.100.250' });
    expect(welcome.status, welcome.text).to.equal(202);
    expect((await stored(welcome.body.id)).status, 'stored as anyone’s').to.equal('pending');
    expect((await stored(welcome.body.id)).client).to.equal(trollClient);
    await until(welcome.body.id, (v) => v.visible && v.status === 'pending' && !v.banned, 2000);

    // Banned again from its message, and lifted from the same place: the Ban button turns into Lift ban.
    await page.click(`li.message[data-id="${welcome.body.id}"] button.ban`);
    await page.click(`li.message[data-id="${welcome.body.id}"] button.ban`);
    await eventually(async () => (await bansInForce()).length === 1);
    await page.click('#show-hidden');
    await until(welcome.body.id, (v) => v.visible && v.banned && v.status === 'hidden');
    const buttons = (id: string) =>
      page.evaluate((messageId: string) => {
        const el = document.querySelector(`li.message[data-id="${messageId}"]`);
        return { ban: !el.querySelector('button.ban').hidden, lift: !el.querySelector('button.lift').hidden };
      }, id);
    expect(await buttons(welcome.body.id)).to.deep.equal({ ban: false, lift: true });
    await page.click(`li.message[data-id="${welcome.body.id}"] button.lift`);
    await eventually(async () => (await bansInForce()).length === 0);
    await until(welcome.body.id, (v) => !v.banned);
    expect(await buttons(welcome.body.id)).to.deep.equal({ ban: true, lift: false });
    expect(await page.evaluate(() => document.getElementById('ban-count').textContent)).to.equal('0');
    await page.click('#show-hidden');
    await page.click('#bans-panel summary');
  });

  it('resumes with Last-Event-ID after a drop: what was sent meanwhile appears', async () => {
    const streamsBefore = requests.filter((r) => r.url().endsWith('/inbox/stream')).length;
    relay.refuse();
    ids.meanwhile = await send({ kind: 'message', text: 'sent while the studio was offline' });
    await pageEventually(
      page,
      () => document.getElementById('live').dataset.state,
      (s) => s !== 'live',
      5000,
      'the drop noticed',
    );
    relay.restore();
    await until(ids.meanwhile, (v) => v.present, 10_000);
    const streams = requests.filter((r) => r.url().endsWith('/inbox/stream'));
    expect(streams.length).to.be.greaterThan(streamsBefore);
    const resumed = streams[streams.length - 1].headers();
    expect(resumed['last-event-id'], 'the reconnect resumes').to.match(/^\d+$/);
    expect(resumed.authorization).to.equal(`Bearer ${key}`);
    await pageEventually(
      page,
      () => document.getElementById('live').dataset.state,
      (s) => s === 'live',
      5000,
      'live again',
    );
  });

  it('a reload reconnects with the kept key (pasted once per tab); a key the server refuses is forgotten', async () => {
    const live = () =>
      pageEventually(
        page,
        () => document.getElementById('live').dataset.state,
        (s) => s === 'live',
        5000,
        'live',
      );
    await page.reload({ waitUntil: 'load' });
    await live();
    await until(ids.live, (v) => v.present && v.statusText === 'answered');
    expect(await page.evaluate(() => document.getElementById('key').value)).to.equal('');
    wrongKey.from = Date.now();
    await page.type('#key', 'wvl_op_not-a-key');
    await page.click('#connect button[type=submit]');
    await pageEventually(
      page,
      () => document.getElementById('notice').textContent,
      (t) => /refused/.test(t),
      5000,
      'the refusal',
    );
    expect(await page.evaluate(() => sessionStorage.getItem('waveline.studio.key'))).to.equal(null);
    expect(await page.evaluate(() => document.querySelectorAll('li.message').length)).to.equal(0);
    wrongKey.to = Date.now();
    await page.type('#key', key);
    await page.click('#connect button[type=submit]');
    await live();
    await until(ids.meanwhile, (v) => v.present);
  });

  it('no key in any URL, no request to any other host, no console error', async () => {
    expect(requests.length).to.be.greaterThan(5);
    for (const url of [...requests.map((r) => r.url()), ...pageUrls, page.url()]) {
      expect(url, 'no key in a URL').to.not.include(key);
      expect(url.startsWith(`${base}/`) || url.startsWith('data:'), url).to.equal(true);
    }
    expect(page.url()).to.equal(`${base}/admin/studio/inbox?station=${f.station.id}`);
    // The dropped stream is the one failed load Chromium reports (ERR_INCOMPLETE_CHUNKED_ENCODING).
    const dropped = (e: ConsoleEntry) => Boolean(e.url?.endsWith('/inbox/stream')) && /net::ERR_/.test(e.text);
    // So is the wrong key's 401.
    const refused = (e: ConsoleEntry) => e.at >= wrongKey.from && e.at <= wrongKey.to && /status of 401/.test(e.text);
    const errors = consoleEntries.filter((e) => (e.type === 'error' || e.type === 'pageerror') && !dropped(e) && !refused(e));
    expect(errors, JSON.stringify(errors)).to.deep.equal([]);
  });
});
