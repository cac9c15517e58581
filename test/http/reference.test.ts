import { expect } from 'chai';
import { sharedServer, type TestServer } from '../support/server.ts';
import { launchBrowser, pageEventually, recordConsole } from '../support/browser.ts';

// Browser globals, used inside page.evaluate() callbacks only (the project is type-checked without the DOM library).
declare const document: any, window: any, getComputedStyle: any, MutationObserver: any;

// The API reference at /docs: Swagger UI from the installed swagger-ui-dist package, reading /openapi.json.

describe('/docs (API reference page)', function () {
  this.timeout(60_000);
  let server: TestServer;
  before(async () => {
    server = await sharedServer();
  });

  it('serves the page and its assets from this server (no CDN), revalidated with an ETag', async () => {
    const res = await fetch(`${server.url}/docs`);
    expect(res.status).to.equal(200);
    expect(res.headers.get('content-type')).to.equal('text/html; charset=utf-8');
    const html = await res.text();
    const urls = [...html.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1]);
    expect(urls).to.have.length(4);
    for (const url of urls) {
      expect(url, 'no CDN').to.match(/^\/docs\/assets\//);
      const file = await fetch(server.url + url);
      expect(file.status, url).to.equal(200);
      const etag = file.headers.get('etag');
      expect(etag, url).to.match(/^"[0-9a-f]{64}"$/);
      expect((await fetch(server.url + url, { headers: { 'If-None-Match': etag! } })).status, url).to.equal(304);
    }
    const missing = await fetch(`${server.url}/docs/assets/..%2Fpackage.json`);
    expect(missing.status).to.equal(404);
    expect(((await missing.json()) as { error: { code: string } }).error.code).to.equal('NOT_FOUND');
  });

  it('renders every operation of /openapi.json in a real browser, without console errors', async () => {
    const doc = (await (await fetch(`${server.url}/openapi.json`)).json()) as { paths: Record<string, object>; info: { version: string } };
    const operations = Object.values(doc.paths).reduce<number>((n, item) => n + Object.keys(item).length, 0);
    const browser = await launchBrowser();
    try {
      const page = await browser.newPage();
      const entries = recordConsole(page);
      await page.goto(`${server.url}/docs`, { waitUntil: 'load' });
      const shown = await pageEventually(
        page,
        () => document.querySelectorAll('.opblock').length,
        (n) => n > 0,
        15_000,
        'operations',
      );
      expect(shown).to.equal(operations);
      const title = await page.evaluate(() => document.querySelector('.info .title')?.textContent ?? '');
      expect(title).to.include('Waveline Station Delivery API').and.include(doc.info.version);
      expect(
        entries.filter((e) => e.type === 'error' || e.type === 'pageerror'),
        JSON.stringify(entries),
      ).to.deep.equal([]);
    } finally {
      await browser.close();
    }
  });
});
