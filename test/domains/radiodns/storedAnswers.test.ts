import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect } from 'chai';
import { buildApp } from '../../../src/http/app.ts';
import { allRoutes } from '../../../src/routes.ts';
import { createStation } from '../../support/factories.ts';
import { startTestServer, type TestServer } from '../../support/server.ts';
import { enabledSetting, get, patchRadioDns } from './helpers.ts';

// SPI documents are cached bytes like every listener read: once stored they are answered before Koa
// (src/http/storedAnswers.ts), with the same bytes and headers, and the per-IP rate limit still counts.

async function countingApp(server: TestServer) {
  const app = buildApp(server.svc, allRoutes);
  let count = 0;
  const createContext = app.koa.createContext.bind(app.koa);
  app.koa.createContext = ((req: IncomingMessage, res: ServerResponse) => {
    count++;
    return createContext(req, res);
  }) as typeof app.koa.createContext;
  const http: Server = createServer(app.handle);
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(http.address() as AddressInfo).port}`,
    koaRequests: () => count,
    close: () => new Promise<void>((resolve) => http.close(() => resolve())),
  };
}

for (const [title, env] of [
  ['rate limits off', { RATE_LIMIT_ANONYMOUS_PER_MINUTE: '0' }],
  ['the anonymous rate limit on', { RATE_LIMIT_ANONYMOUS_PER_MINUTE: '3' }],
] as const) {
  describe(`RadioDNS documents from cached bytes, before Koa (${title})`, () => {
    let server: TestServer;
    let app: Awaited<ReturnType<typeof countingApp>>;
    before(async () => {
      server = await startTestServer({ env });
      app = await countingApp(server);
    });
    after(async () => {
      await app.close();
      await server.close();
    });

    it('a repeated SI.xml is answered without Koa, same bytes and headers; a 304 too; an unknown host goes to Koa', async () => {
      const host = `fast-${Date.now().toString(36)}.radio.example`;
      const station = await createStation(server.url);
      expect((await patchRadioDns(server.url, station.id, enabledSetting(host))).status).to.equal(200);
      const first = await get(app.url, '/radiodns/spi/3.1/SI.xml', { host });
      expect(first.status).to.equal(200);
      const before = app.koaRequests();
      const second = await get(app.url, '/radiodns/spi/3.1/SI.xml', { host: `${host}:443` });
      const revalidated = await get(app.url, '/radiodns/spi/3.1/SI.xml', { host, 'if-none-match': first.headers.etag as string });
      const limited = env.RATE_LIMIT_ANONYMOUS_PER_MINUTE !== '0';
      const refused = limited ? await get(app.url, '/radiodns/spi/3.1/SI.xml', { host, 'x-request-id': 'spi-limited' }) : null;
      expect(app.koaRequests(), 'answered before Koa').to.equal(before);
      expect(second.text).to.equal(first.text);
      for (const name of ['etag', 'content-type', 'cache-control', 'content-length', 'access-control-allow-origin'])
        expect(second.headers[name], name).to.equal(first.headers[name]);
      expect(revalidated.status).to.equal(304);
      expect(revalidated.headers['cache-control']).to.equal('public, max-age=300');
      if (refused) {
        // Three a minute: the first (Koa), the second and the 304 took them, the fourth is refused.
        expect(second.headers['ratelimit-policy']).to.equal('"anonymous";q=3;w=60');
        expect(refused.status, refused.text).to.equal(429);
        expect(JSON.parse(refused.text).error).to.include({ code: 'RATE_LIMITED', requestId: 'spi-limited' });
        expect(refused.headers['retry-after']).to.match(/^\d+$/);
      }
      const unknown = await get(app.url, '/radiodns/spi/3.1/SI.xml', { host: 'nobody.example' });
      expect(unknown.status).to.equal(limited ? 429 : 404);
      expect(app.koaRequests()).to.equal(before + 1);
    });
  });
}
