import { expect } from 'chai';
import { OPERATOR_SCOPES } from '../../src/lib/operatorScopes.ts';
import { Validator } from '@seriousme/openapi-schema-validator';
import { sharedServer } from '../support/server.ts';
import { request } from '../support/http.ts';
import { allRoutes } from '../../src/routes.ts';
import { readFileSync } from 'node:fs';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { Type } from '@sinclair/typebox';
import { buildOpenApi } from '../../src/http/openapi.ts';
import { defineRoute } from '../../src/http/route.ts';

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

  it('documents RATE_LIMITED (429) on every rate-limited operation, and each credential scope by its contract name', async () => {
    const server = await sharedServer();
    const doc = (await request(server.url, 'GET', '/openapi.json')).body;
    const limited = allRoutes.filter((route) => route.rateLimit);
    expect(limited.map((route) => route.operationId)).to.include.members(['graphqlGet', 'graphqlPost', 'getStation', 'ingestPlayback']);
    for (const route of limited) {
      const response = doc.paths[route.path][route.method].responses['429'];
      expect(response, `${route.method.toUpperCase()} ${route.path}`).to.be.an('object');
      expect(response.content['application/json'].schema.$ref).to.match(/^#\/components\/schemas\/(Error|LegacyError)$/);
    }
    // Station credentials' scopes and operator keys' (docs/operations.md#operator-keys-and-the-audit-log).
    const scopes: string[] = ['listener:read', 'push:register', 'ingest:write', ...OPERATOR_SCOPES];
    const named = JSON.stringify(doc).match(/\b[a-z]+:(read|write|register)\b/g) ?? [];
    expect([...new Set(named)].filter((scope) => !scopes.includes(scope))).to.deep.equal([]);
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
        const bodies = [
          op.requestBody?.content?.['application/json'],
          ...Object.values(op.responses as Record<string, any>).map((r) => r.content?.['application/json']),
        ];
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

  it('documents every media type an answer comes in: the play log in CSV beside JSON (format=csv|json)', async () => {
    const server = await sharedServer();
    const doc = (await request(server.url, 'GET', '/openapi.json')).body;
    const content = doc.paths['/admin/v1/stations/{stationId}/plays'].get.responses['200'].content;
    expect(content).to.have.keys('application/json', 'text/csv');
    expect(content['text/csv'].schema).to.include({ type: 'string' });
  });

  it('carries the version of package.json', async () => {
    const server = await sharedServer();
    const doc = (await request(server.url, 'GET', '/openapi.json')).body;
    const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8'));
    expect(doc.info.version).to.equal(pkg.version);
  });

  it('names the schemas of a route added later with no change to the generator: by title, else after the operation; a clash gets a number', () => {
    const Thing = Type.Object(
      { code: Type.String({ pattern: '^\\d{4}-[A-Z]{2}$' }), at: Type.String({ pattern: '^\\d{2}:\\d{2}$', minLength: 5 }) },
      { title: 'Thing' },
    );
    const OtherThing = Type.Object({ other: Type.Boolean() }, { title: 'Thing' });
    const route = (operationId: string, schema: ReturnType<typeof Type.Object>, body?: ReturnType<typeof Type.Object>) =>
      defineRoute({
        method: 'post',
        path: `/x/${operationId}`,
        operationId,
        summary: 's',
        tags: ['t'],
        surface: 'admin',
        body,
        responses: { 200: { description: 'ok', schema }, 201: { description: 'made', schema: Type.Object({ id: Type.String() }) } },
        handler: () => null,
      });
    const doc = buildOpenApi(
      [route('makeThing', Thing, Type.Object({ name: Type.String() })), route('otherThing', OtherThing), route('sameThing', Thing)],
      { version: '9.9.9', serverUrl: 'http://localhost' },
    ) as any;
    const ref = (id: string, status: string) => doc.paths[`/x/${id}`].post.responses[status].content['application/json'].schema.$ref;
    expect(ref('makeThing', '200')).to.equal('#/components/schemas/Thing');
    expect(ref('sameThing', '200'), 'one schema, one component').to.equal('#/components/schemas/Thing');
    expect(ref('otherThing', '200'), 'another schema with the same title').to.equal('#/components/schemas/Thing2');
    expect(ref('makeThing', '201')).to.equal('#/components/schemas/MakeThing201Response');
    expect(doc.paths['/x/makeThing'].post.requestBody.content['application/json'].schema.$ref).to.equal(
      '#/components/schemas/MakeThingRequest',
    );
    const example = doc.paths['/x/makeThing'].post.responses['200'].content['application/json'].example;
    expect(example.code).to.match(/^\d{4}-[A-Z]{2}$/);
    expect(example.at).to.match(/^\d{2}:\d{2}$/);
  });
});
