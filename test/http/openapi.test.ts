import { expect } from 'chai';
import { Validator } from '@seriousme/openapi-schema-validator';
import { sharedServer } from '../support/server.ts';
import { request } from '../support/http.ts';
import { allRoutes } from '../../src/http/routes.ts';

describe('/openapi.json', () => {
  it('is a valid OpenAPI 3.1 document', async () => {
    const server = await sharedServer();
    const res = await request(server.url, 'GET', '/openapi.json');
    expect(res.status).to.equal(200);
    expect(res.body.openapi).to.equal('3.1.0');
    const result = await new Validator().validate(res.body);
    expect(result.valid, JSON.stringify(result.errors, null, 2)).to.equal(true);
  });

  it('lists every registered route with its method, and each operation id once', async () => {
    const server = await sharedServer();
    const doc = (await request(server.url, 'GET', '/openapi.json')).body;
    expect(allRoutes.length).to.be.greaterThan(5);
    const ids = new Set<string>();
    for (const route of allRoutes) {
      const op = doc.paths[route.path]?.[route.method];
      expect(op, `${route.method.toUpperCase()} ${route.path}`).to.be.an('object');
      expect(op.operationId).to.equal(route.operationId);
      expect(ids.has(route.operationId), route.operationId).to.equal(false);
      ids.add(route.operationId);
      const queryNames = Object.keys((route.query as { properties?: object } | undefined)?.properties ?? {});
      expect(op.parameters.filter((p: { in: string }) => p.in === 'query').map((p: { name: string }) => p.name)).to.deep.equal(queryNames);
      if (route.body) expect(op.requestBody.content['application/json'].schema).to.be.an('object');
    }
  });

  it('documents the listener error body and the bearer scheme', async () => {
    const server = await sharedServer();
    const doc = (await request(server.url, 'GET', '/openapi.json')).body;
    const station = doc.paths['/api/v1/stations/{stationSlug}'].get;
    expect(station.security).to.deep.equal([{ bearer: [] }]);
    expect(station.responses['401'].content['application/json'].schema.properties.error.properties).to.have.keys('code', 'message', 'requestId', 'issues');
    expect(station.parameters[0]).to.include({ name: 'stationSlug', in: 'path', required: true });
  });
});
