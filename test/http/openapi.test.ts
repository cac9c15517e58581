import { expect } from 'chai';
import { Validator } from '@seriousme/openapi-schema-validator';
import { sharedServer } from '../support/server.ts';
import { request } from '../support/http.ts';
import { allRoutes } from '../../src/http/routes.ts';
import { readFileSync } from 'node:fs';
import { Ajv2020 } from 'ajv/dist/2020.js';

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
    expect(station.responses['401'].content['application/json'].schema).to.deep.equal({ $ref: '#/components/schemas/Error' });
    expect(doc.components.schemas.Error.properties.error.properties).to.have.keys('code', 'message', 'requestId', 'issues');
    expect(station.parameters[0]).to.include({ name: 'stationSlug', in: 'path', required: true });
  });

  it('names every request and response schema under components.schemas and refers to it with $ref', async () => {
    const server = await sharedServer();
    const doc = (await request(server.url, 'GET', '/openapi.json')).body;
    const schemas = doc.components.schemas as Record<string, unknown>;
    expect(schemas).to.include.keys('Station', 'ContentRecord', 'ContentList', 'NowPlaying', 'Track', 'Schedule', 'Error', 'LegacyError');
    let checked = 0;
    for (const [path, item] of Object.entries(doc.paths as Record<string, Record<string, any>>)) {
      for (const [method, op] of Object.entries(item)) {
        const bodies = [op.requestBody?.content?.['application/json'], ...Object.values(op.responses as Record<string, any>).map((r) => r.content?.['application/json'])];
        for (const media of bodies.filter(Boolean)) {
          const ref: string | undefined = media.schema.$ref;
          expect(ref, `${method} ${path}`).to.match(/^#\/components\/schemas\/[A-Za-z0-9_.-]+$/);
          expect(schemas[ref!.split('/').pop()!], ref).to.be.an('object');
          checked++;
        }
        expect(op.summary, `${method} ${path}`).to.be.a('string').and.not.equal('');
        expect(op.description, `${method} ${path}`).to.be.a('string').and.not.equal('');
      }
    }
    expect(checked).to.be.greaterThan(50);
    const limit = doc.paths['/api/v1/stations/{stationSlug}/content'].get.parameters.find((p: { name: string }) => p.name === 'limit');
    expect(limit.required, 'a query parameter with a default need not be sent').to.equal(false);
    // Nested titled schemas are components too: a content list refers to ContentRecord.
    expect(JSON.stringify(schemas.ContentList)).to.include('"#/components/schemas/ContentRecord"');
  });

  it('gives each JSON response an example that validates against its schema', async () => {
    const server = await sharedServer();
    const doc = (await request(server.url, 'GET', '/openapi.json')).body;
    const ajv = new Ajv2020({ strict: false, validateFormats: false });
    ajv.addSchema({ $id: 'waveline:openapi', components: doc.components });
    let checked = 0;
    for (const [path, item] of Object.entries(doc.paths as Record<string, Record<string, any>>)) {
      for (const [method, op] of Object.entries(item)) {
        for (const [status, response] of Object.entries(op.responses as Record<string, any>)) {
          const media = response.content?.['application/json'];
          if (!media) continue;
          expect(media, `${method} ${path} ${status}`).to.have.property('example');
          const validate = ajv.compile({ $ref: `waveline:openapi${media.schema.$ref}` });
          expect(validate(media.example), `${method} ${path} ${status}: ${JSON.stringify(validate.errors)}`).to.equal(true);
          checked++;
        }
      }
    }
    expect(checked).to.be.greaterThan(50);
  });

  it('carries the version of package.json', async () => {
    const server = await sharedServer();
    const doc = (await request(server.url, 'GET', '/openapi.json')).body;
    const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8'));
    expect(doc.info.version).to.equal(pkg.version);
  });
});
