import { expect } from 'chai';
import { startTestServer, sharedServer, type TestServer } from '../support/server.ts';
import { admin, request } from '../support/http.ts';
import { createStation, createToken, listenerFixture } from '../support/factories.ts';
import { ManualClock } from '../../src/lib/clock.ts';
import { generateToken, hashToken } from '../../src/lib/tokens.ts';

/** Every 401 case must be indistinguishable: same status, code and message. */
async function expectUnauthenticated(server: TestServer, path: string, headers: Record<string, string>) {
  const res = await request(server.url, 'GET', path, { headers });
  expect(res.status, JSON.stringify(res.body)).to.equal(401);
  expect(res.body.error.code).to.equal('UNAUTHENTICATED');
  expect(res.body.error.message).to.equal('A valid station credential with the required scope is needed.');
  expect(res.body.error.requestId).to.equal(res.headers.get('x-request-id'));
  expect(Object.keys(res.body.error).sort()).to.deep.equal(['code', 'message', 'requestId']);
}

describe('credentials and listener authentication', () => {
  let server: TestServer;
  before(async () => {
    server = await sharedServer();
  });

  it('issues wvl_ tokens of 50 characters whose secret is shown once and only a SHA-256 hash is stored', async () => {
    const station = await createStation(server.url);
    const res = await admin(server.url, 'POST', `/stations/${station.id}/credentials`, { scopes: ['listener:read'], label: 'website' });
    expect(res.status).to.equal(201);
    expect(res.body.token).to.match(/^wvl_[0-9A-Za-z]{46}$/);
    expect(res.body.scopes).to.deep.equal(['listener:read']);
    const row = await server.svc.db('credentials').where({ id: res.body.id }).first();
    expect(row.token_hash).to.equal(hashToken(res.body.token));
    expect(JSON.stringify(row)).not.to.include(res.body.token);
    const list = await admin(server.url, 'GET', `/stations/${station.id}/credentials`);
    expect(JSON.stringify(list.body)).not.to.include(res.body.token);
    expect(list.body.credentials[0]).to.include({ id: res.body.id, label: 'website' });
  });

  it('expires within one year by default and refuses an expiry further ahead', async () => {
    const station = await createStation(server.url);
    const res = await admin(server.url, 'POST', `/stations/${station.id}/credentials`, { scopes: ['listener:read'] });
    const expiresAt = new Date(res.body.expiresAt).getTime();
    expect(expiresAt)
      .to.be.greaterThan(Date.now() + 364 * 86400_000)
      .and.at.most(Date.now() + 366 * 86400_000);
    const tooLate = await admin(server.url, 'POST', `/stations/${station.id}/credentials`, {
      scopes: ['listener:read'],
      expiresAt: new Date(Date.now() + 400 * 86400_000).toISOString(),
    });
    expect(tooLate.status).to.equal(400);
    expect(tooLate.body.error.issues[0].path).to.equal('expiresAt');
  });

  it('refuses unknown scopes with a suggestion', async () => {
    const station = await createStation(server.url);
    const res = await admin(server.url, 'POST', `/stations/${station.id}/credentials`, { scopes: ['listener:reads'] });
    expect(res.status).to.equal(400);
    expect(res.body.error.issues[0]).to.include({ path: 'scopes.0', suggestion: 'listener:read' });
  });

  describe('every failure is 401 UNAUTHENTICATED with an identical body', () => {
    let slug: string;
    let token: string;
    let stationId: string;
    before(async () => {
      const fixture = await listenerFixture(server.url);
      slug = fixture.station.slug;
      stationId = fixture.station.id;
      token = fixture.token;
    });
    const path = () => `/api/v1/stations/${slug}`;

    it('missing Authorization', () => expectUnauthenticated(server, path(), {}));
    it('the raw token without "Bearer "', () => expectUnauthenticated(server, path(), { authorization: token }));
    it('another scheme', () => expectUnauthenticated(server, path(), { authorization: `Basic ${token}` }));
    it('an unknown, well-formed token', () => expectUnauthenticated(server, path(), { authorization: `Bearer ${generateToken()}` }));
    it('a dashboard session cookie is ignored', () => expectUnauthenticated(server, path(), { cookie: `session=${token}` }));

    it('a token with a bad checksum, rejected before any database query', async () => {
      const bad = token.slice(0, -1) + (token.endsWith('0') ? '1' : '0');
      const queries: string[] = [];
      const onQuery = (q: { sql: string }) => queries.push(q.sql);
      server.svc.db.on('query', onQuery);
      try {
        await expectUnauthenticated(server, path(), { authorization: `Bearer ${bad}` });
        await expectUnauthenticated(server, path(), { authorization: 'Bearer wvl_short' });
      } finally {
        server.svc.db.removeListener('query', onQuery);
      }
      expect(queries.filter((sql) => sql.includes('credentials'))).to.deep.equal([]);
    });

    it('a revoked token (at once, even though it was cached)', async () => {
      const { id, token: revoked } = await createToken(server.url, stationId);
      expect((await request(server.url, 'GET', path(), { token: revoked })).status).to.equal(200);
      expect((await admin(server.url, 'DELETE', `/stations/${stationId}/credentials/${id}`)).status).to.equal(204);
      await expectUnauthenticated(server, path(), { authorization: `Bearer ${revoked}` });
    });

    it('a rotated token stops working; the new one works', async () => {
      const { id, token: old } = await createToken(server.url, stationId);
      expect((await request(server.url, 'GET', path(), { token: old })).status).to.equal(200);
      const rotated = await admin(server.url, 'POST', `/stations/${stationId}/credentials/${id}/rotate`);
      expect(rotated.status).to.equal(201);
      expect(rotated.body.token).to.not.equal(old);
      await expectUnauthenticated(server, path(), { authorization: `Bearer ${old}` });
      expect((await request(server.url, 'GET', path(), { token: rotated.body.token })).status).to.equal(200);
    });

    it('a wrong-scope token', async () => {
      const { token: pushOnly } = await createToken(server.url, stationId, ['push:register']);
      await expectUnauthenticated(server, path(), { authorization: `Bearer ${pushOnly}` });
    });

    it("another station's token", async () => {
      const other = await listenerFixture(server.url);
      await expectUnauthenticated(server, path(), { authorization: `Bearer ${other.token}` });
    });
  });

  it('an expired token is 401 (clock-controlled)', async () => {
    const clock = new ManualClock('2026-01-01T00:00:00Z');
    const own = await startTestServer({ clock });
    try {
      const station = await createStation(own.url);
      const { token } = await createToken(own.url, station.id, ['listener:read'], { expiresAt: '2026-01-02T00:00:00Z' });
      expect((await request(own.url, 'GET', `/api/v1/stations/${station.slug}`, { token })).status).to.equal(200);
      clock.set('2026-01-02T00:00:01Z');
      await expectUnauthenticated(own, `/api/v1/stations/${station.slug}`, { authorization: `Bearer ${token}` });
    } finally {
      await own.close();
    }
  });

  it('token look-ups are cached: repeated reads do not query credentials each time', async () => {
    const { station, token } = await listenerFixture(server.url);
    await request(server.url, 'GET', `/api/v1/stations/${station.slug}`, { token });
    const queries: string[] = [];
    const onQuery = (q: { sql: string }) => queries.push(q.sql);
    server.svc.db.on('query', onQuery);
    try {
      for (let i = 0; i < 5; i++)
        expect((await request(server.url, 'GET', `/api/v1/stations/${station.slug}`, { token })).status).to.equal(200);
    } finally {
      server.svc.db.removeListener('query', onQuery);
    }
    expect(queries.filter((sql) => /from "credentials"/.test(sql))).to.deep.equal([]);
  });

  it('revocation reaches another web process through Redis', async () => {
    const other = await startTestServer();
    try {
      const { station } = await listenerFixture(server.url);
      const { id, token } = await createToken(server.url, station.id);
      expect((await request(other.url, 'GET', `/api/v1/stations/${station.slug}`, { token })).status).to.equal(200);
      await admin(server.url, 'DELETE', `/stations/${station.id}/credentials/${id}`);
      const { eventually } = await import('../support/factories.ts');
      await eventually(async () => (await request(other.url, 'GET', `/api/v1/stations/${station.slug}`, { token })).status === 401, {
        timeoutMs: 2000,
      });
    } finally {
      await other.close();
    }
  });

  it('the admin API needs the operator token', async () => {
    const res = await request(server.url, 'POST', '/admin/v1/stations', { json: { slug: 'nope-nope', name: 'x', timezone: 'UTC' } });
    expect(res.status).to.equal(401);
    expect(res.body.error.code).to.equal('UNAUTHENTICATED');
    const wrong = await request(server.url, 'GET', '/admin/v1/stations/st_x', { token: 'not-the-admin-token' });
    expect(wrong.status).to.equal(401);
  });
});
