import { expect } from 'chai';
import { loadConfig, ConfigError } from '../../src/config.ts';
import { clientIp } from '../../src/gateway/admission.ts';
import { startTestServer } from '../support/server.ts';
import { createStation } from '../support/factories.ts';
import { fetchMedia, mediaPath } from '../domains/media/helpers.ts';

// One proxy-trust setting for web and gateway: TRUSTED_PROXY_HOPS proxies append to X-Forwarded-For, so
// the client address is that many entries from the right; 0 = the socket address. What a client writes
// itself (entries further left) never picks its rate-limit bucket.

describe('proxy trust (TRUSTED_PROXY_HOPS): a forged X-Forwarded-For cannot move a client into a fresh bucket', function () {
  this.timeout(30_000);

  /** Anonymous media reads (limit 3 per IP per minute) with the given X-Forwarded-For values. */
  async function statuses(env: Record<string, string>, forwardedFor: (i: number) => string | undefined, count: number): Promise<number[]> {
    const server = await startTestServer({ env: { RATE_LIMIT_ANONYMOUS_PER_MINUTE: '3', ...env } });
    try {
      const station = await createStation(server.url);
      const path = mediaPath(station.id, '00000000-0000-4000-8000-000000000000'); // 404 after the rate-limit gate
      const out: number[] = [];
      for (let i = 0; i < count; i++) {
        const value = forwardedFor(i);
        out.push((await fetchMedia(server.url, path, { headers: value ? { 'x-forwarded-for': value } : {} })).status);
      }
      return out;
    } finally {
      await server.close();
    }
  }

  it('one hop (Heroku-style router): a fresh left-most address per request still meets the limit of the address the router appended', async () => {
    const forged = await statuses({ TRUSTED_PROXY_HOPS: '1' }, (i) => `10.9.${i}.1, 203.0.113.50`, 5);
    expect(forged).to.deep.equal([404, 404, 404, 429, 429]);
    const twoClients = await statuses({ TRUSTED_PROXY_HOPS: '1' }, (i) => `198.51.100.7, 203.0.113.${i % 2}`, 8);
    expect(
      twoClients.filter((s) => s === 404),
      'two router-seen addresses, two buckets',
    ).to.have.length(6);
  });

  it('zero hops (direct exposure): X-Forwarded-For is ignored, the socket address is the client', async () => {
    expect(await statuses({ TRUSTED_PROXY_HOPS: '0' }, (i) => `10.9.${i}.1`, 5)).to.deep.equal([404, 404, 404, 429, 429]);
  });

  it('two hops: the second entry from the right', async () => {
    expect(await statuses({ TRUSTED_PROXY_HOPS: '2' }, (i) => `10.9.${i}.1, 203.0.113.9, 10.0.0.${i}`, 5)).to.deep.equal([
      404, 404, 404, 429, 429,
    ]);
  });

  it('the gateway counts with the same setting; GATEWAY_TRUSTED_PROXY_HOPS stays an alias (both set must agree)', () => {
    expect(loadConfig({ TRUSTED_PROXY_HOPS: '2' }).trustedProxyHops).to.equal(2);
    expect(loadConfig({ GATEWAY_TRUSTED_PROXY_HOPS: '0' }).trustedProxyHops).to.equal(0);
    expect(loadConfig({}).trustedProxyHops).to.equal(1);
    expect(() => loadConfig({ TRUSTED_PROXY_HOPS: '1', GATEWAY_TRUSTED_PROXY_HOPS: '2' })).to.throw(ConfigError, /disagree/);
    const hops = loadConfig({ TRUSTED_PROXY_HOPS: '1' }).trustedProxyHops;
    expect(clientIp('127.0.0.1', '10.9.9.9, 203.0.113.50', hops)).to.equal('203.0.113.50');
    expect(clientIp('127.0.0.1', '10.9.9.9', 0)).to.equal('127.0.0.1');
  });
});
