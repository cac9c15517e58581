import { expect } from 'chai';
import { allRoutes } from '../../src/routes.ts';
import { defineRoute } from '../../src/http/route.ts';
import { adminAccessProblem } from '../../src/http/adminRoute.ts';
import { buildApp } from '../../src/http/app.ts';
import { OPERATOR_SCOPES } from '../../src/lib/operatorScopes.ts';
import { sharedServer } from '../support/server.ts';
import { listenerFixture } from '../support/factories.ts';
import { request } from '../support/http.ts';

// Every admin route declares, beside its path, the operator-key scope it needs (or `root`) and, for a
// write, its audit action (docs/operations.md#operator-keys-and-the-audit-log). A route added without
// one — a branch merged later — fails here, with the line to add, and does not mount.

describe('admin routes: access declared beside every route', () => {
  const adminRoutes = allRoutes.filter((route) => route.surface === 'admin');

  it('walks the route table: no admin route without a scope, no admin write without an audit action', () => {
    expect(adminRoutes.length).to.be.greaterThan(40);
    const problems = adminRoutes.map(adminAccessProblem).filter((problem): problem is string => problem !== null);
    expect(problems, `\n${problems.join('\n')}\n`).to.deep.equal([]);
  });

  it('names only known scopes (a GET its area’s), and writes name actions as <area>.<verb>', () => {
    const known = new Set<string>([...OPERATOR_SCOPES, 'root']);
    for (const route of adminRoutes) {
      const where = `${route.method.toUpperCase()} ${route.path}`;
      expect(known.has(route.access!.scope), where).to.equal(true);
      if (route.method !== 'get') expect(route.access!.action, where).to.match(/^[a-z-]+\.[a-z-]+$/);
      else expect(route.access!.action, where).to.equal(undefined);
    }
    const rootOnly = adminRoutes.filter((route) => route.access!.scope === 'root').map((route) => `${route.method} ${route.path}`);
    expect(rootOnly.sort()).to.deep.equal(
      [
        'post /admin/v1/stations',
        'post /admin/v1/import',
        'get /admin/v1/audit',
        'post /admin/v1/operator-keys',
        'get /admin/v1/operator-keys',
        'get /admin/v1/operator-keys/{keyId}',
        'post /admin/v1/operator-keys/{keyId}/rotate',
        'delete /admin/v1/operator-keys/{keyId}',
      ].sort(),
    );
  });

  it('refuses to mount an admin route without access, saying what to add', async () => {
    const server = await sharedServer();
    const route = defineRoute({
      method: 'post',
      path: '/admin/v1/stations/{stationId}/jingles',
      operationId: 'adminCreateJingle',
      summary: 'x',
      tags: ['admin'],
      surface: 'admin',
      responses: { 201: { description: 'x' } },
      handler: () => ({}),
    });
    expect(adminAccessProblem(route)).to.include("add `access: { scope: 'content:write', action: 'content.publish' }`");
    expect(() => buildApp(server.svc, [route])).to.throw(/adminCreateJingle.*declares no access/);
    const withoutAction = { ...route, access: { scope: 'content:write' as const } };
    expect(() => buildApp(server.svc, [withoutAction])).to.throw(/without an audit action/);
  });

  it('keeps listener reads away from the admin code: no operator-key look-up, no audit entry', async () => {
    const server = await sharedServer();
    const { station, token } = await listenerFixture(server.url);
    const calls: string[] = [];
    const { operatorKeys, audit } = server.svc;
    const byHash = operatorKeys.byHash.bind(operatorKeys);
    const record = audit.record.bind(audit);
    operatorKeys.byHash = (hash) => (calls.push('byHash'), byHash(hash));
    audit.record = (trx, entry) => (calls.push('record'), record(trx, entry));
    try {
      for (const path of ['', '/content?type=news', '/schedule']) {
        const res = await request(server.url, 'GET', `/api/v1/stations/${station.slug}${path}`, { token });
        expect(res.status, path).to.be.oneOf([200, 404]);
      }
      expect(calls).to.deep.equal([]);
    } finally {
      operatorKeys.byHash = byHash;
      audit.record = record;
    }
  });
});
