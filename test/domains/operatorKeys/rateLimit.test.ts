import { expect } from 'chai';
import { randomInt } from 'node:crypto';
import { startTestServer, type TestServer } from '../../support/server.ts';
import { request } from '../../support/http.ts';
import { ADMIN_TOKEN } from '../../support/env.ts';

// docs/operations.md#operator-keys-and-the-audit-log: ten failed admin authentications a minute from one
// client address → 429 RATE_LIMITED with Retry-After; the address by the trusted-proxy rule of the listener
// routes' limits.

describe('admin authentication: failures limited per client address', () => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer({ env: { RATE_LIMIT_ADMIN_FAILURES_PER_MINUTE: '10', TRUSTED_PROXY_HOPS: '1' } });
  });
  after(() => server.close());

  // Fresh addresses per run: the buckets live in Redis (services mode) across runs.
  const address = () => `10.${randomInt(256)}.${randomInt(256)}.${randomInt(1, 255)}`;
  const call = (ip: string, token?: string, forwarded = ip) =>
    request(server.url, 'GET', '/admin/v1/operator-keys', { token, headers: { 'x-forwarded-for': forwarded } });

  it('answers 429 with Retry-After from the eleventh failure a minute, for that address only, whatever the key', async () => {
    const attacker = address();
    const failures = [undefined, 'wrong', `wvo_${'a'.repeat(40)}`, `wvl_${'a'.repeat(46)}`];
    for (let i = 0; i < 10; i++) {
      const res = await call(attacker, failures[i % failures.length]);
      expect(res.status, `failure ${i + 1}`).to.equal(401);
    }
    const limited = await call(attacker, 'wrong');
    expect(limited.status).to.equal(429);
    expect(limited.body.error.code).to.equal('RATE_LIMITED');
    expect(Number(limited.headers.get('retry-after'))).to.be.within(1, 60);
    // The address is refused before its key is looked at, so guessing on stops here.
    expect((await call(attacker, ADMIN_TOKEN)).status).to.equal(429);

    // Another client: its own bucket. A spoofed left-hand X-Forwarded-For entry changes nothing.
    const other = address();
    expect((await call(other, ADMIN_TOKEN)).status).to.equal(200);
    expect((await call(other, 'wrong')).status).to.equal(401);
    expect((await call(attacker, 'wrong', `${address()}, ${attacker}`)).status).to.equal(429);
  });

  it('counts only failures: successful calls never empty the bucket', async () => {
    const ip = address();
    for (let i = 0; i < 15; i++) expect((await call(ip, ADMIN_TOKEN)).status).to.equal(200);
  });
});
