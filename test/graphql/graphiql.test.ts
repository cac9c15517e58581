import { expect } from 'chai';
import type { Browser } from 'puppeteer-core';
import { sharedServer, type TestServer } from '../support/server.ts';
import { request } from '../support/http.ts';
import { listenerFixture } from '../support/factories.ts';
import { launchBrowser, pageEventually, recordConsole } from '../support/browser.ts';

// Browser globals, used inside page.evaluate() callbacks only (the project is type-checked without the DOM library).
declare const document: any, window: any, getComputedStyle: any, MutationObserver: any;

// GraphiQL at the GraphQL endpoint for a browser (GET, Accept: text/html), from installed packages; API
// clients keep their answers exactly.

const BROWSER_ACCEPT = 'text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,*/*;q=0.8';

describe('GraphiQL on the GraphQL endpoint', () => {
  let server: TestServer;
  before(async () => {
    server = await sharedServer();
  });

  it('a browser GET (Accept: text/html) gets the GraphiQL page, whose every script and style sheet is served here', async () => {
    const { station } = await listenerFixture(server.url);
    const res = await fetch(`${server.url}/api/v1/stations/${station.slug}/graphql`, { headers: { Accept: BROWSER_ACCEPT } });
    expect(res.status).to.equal(200);
    expect(res.headers.get('content-type')).to.equal('text/html; charset=utf-8');
    expect(res.headers.get('vary')).to.include('Accept');
    const html = await res.text();
    expect(html).to.include('<title>GraphiQL · Waveline</title>');
    const urls = [...html.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1]).filter((u) => !u.startsWith('data:'));
    expect(urls.length).to.equal(6);
    for (const url of urls) {
      expect(url, 'no CDN').to.match(/^\/graphiql\/assets\//);
      const file = await fetch(server.url + url);
      expect(file.status, url).to.equal(200);
      expect(file.headers.get('content-type'), url).to.match(url.endsWith('.css') ? /^text\/css/ : /^text\/javascript/);
      expect((await file.arrayBuffer()).byteLength, url).to.be.greaterThan(100);
    }
    expect((await fetch(`${server.url}/graphiql/assets/package.json`)).status).to.equal(404);
  });

  it('API clients keep today’s answers: JSON (or no, or any) Accept is GraphQL over HTTP, with the gates first', async () => {
    const { station, token } = await listenerFixture(server.url);
    const path = `/api/v1/stations/${station.slug}/graphql?query=${encodeURIComponent('{ station { slug } }')}`;
    for (const accept of [undefined, '*/*', 'application/json', 'application/graphql-response+json', 'application/json, text/html;q=0.5']) {
      const headers: Record<string, string> = accept ? { Accept: accept } : {};
      const anonymous = await request(server.url, 'GET', path, { headers });
      expect(anonymous.status, `${accept}: no credential`).to.equal(401);
      expect(anonymous.body.error.code).to.equal('UNAUTHENTICATED');
      const ok = await request(server.url, 'GET', path, { token, headers });
      expect(ok.status, String(accept)).to.equal(200);
      expect(ok.headers.get('content-type'), String(accept)).to.match(/^application\/(graphql-response\+)?json/);
      expect(ok.body).to.deep.equal({ data: { station: { slug: station.slug } } });
    }
    const post = await request(server.url, 'POST', `/api/v1/stations/${station.slug}/graphql`, {
      token,
      json: { query: '{ station { slug } }' },
      headers: { Accept: BROWSER_ACCEPT },
    });
    expect(post.status, 'POST is never the page').to.equal(200);
    expect(post.body.data.station.slug).to.equal(station.slug);
  });

  describe('in a real browser', function () {
    this.timeout(60_000);
    let browser: Browser;
    before(async () => {
      browser = await launchBrowser();
    });
    after(() => browser?.close());

    it('runs a query with the credential typed into the header field, sent as Authorization: Bearer', async () => {
      const { station, token } = await listenerFixture(server.url, { name: 'GraphiQL FM' });
      const page = await browser.newPage();
      const entries = recordConsole(page);
      const sent: Array<string | undefined> = [];
      page.on('request', (req) => {
        if (req.method() === 'POST' && req.url().endsWith('/graphql')) sent.push(req.headers()['authorization']);
      });
      const query = '{ station { name slug } }';
      await page.goto(`${server.url}/api/v1/stations/${station.slug}/graphql?query=${encodeURIComponent(query)}`, { waitUntil: 'load' });
      await page.waitForSelector('.graphiql-execute-button', { timeout: 10_000 });
      expect(sent, 'nothing is sent before a credential is entered').to.deep.equal([]);
      await page.type('#waveline-token', token);
      await page.click('.waveline-credential button[type=submit]');
      await page.waitForSelector('.graphiql-execute-button');
      await page.click('.graphiql-execute-button');
      const result = await pageEventually(
        page,
        () => document.querySelector('.result-window')?.textContent ?? '',
        (text) => text.includes('GraphiQL FM'),
        10_000,
        'result pane',
      );
      expect(result).to.include(station.slug);
      expect(sent.length, 'the schema and the query').to.be.at.least(2);
      for (const header of sent) expect(header).to.equal(`Bearer ${token}`);
      expect(
        entries.filter((e) => e.type === 'error' || e.type === 'pageerror'),
        JSON.stringify(entries),
      ).to.deep.equal([]);
      await page.close();
    });
  });
});
