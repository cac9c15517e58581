import { expect } from 'chai';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import { createWavelineClient, type Middleware } from '../../client/src/index.ts';
import { sharedServer, type TestServer } from '../support/server.ts';
import { request } from '../support/http.ts';
import { ingest, ingestFixture } from '../support/ingest.ts';
import { published, putType } from '../domains/content/helpers.ts';

// The typed client in client/ (generated from /openapi.json) drives the running server; every answer it
// gets is also checked against the schema the document gives for that operation and status.

describe('typed client (client/)', () => {
  let server: TestServer;
  let conforms: Middleware;
  const checked: string[] = [];

  before(async () => {
    server = await sharedServer();
    const doc = (await request(server.url, 'GET', '/openapi.json')).body;
    const ajv = new Ajv2020({ strict: false, validateFormats: false });
    ajv.addSchema({ $id: 'waveline:openapi', components: doc.components });
    const compiled = new Map<string, ValidateFunction>();
    conforms = {
      async onResponse({ request: req, response, schemaPath }) {
        if (response.status === 304) return;
        const operation = doc.paths[schemaPath]?.[req.method.toLowerCase()];
        const media = operation?.responses?.[String(response.status)]?.content?.['application/json'];
        expect(media, `${req.method} ${schemaPath} ${response.status} is documented`).to.be.an('object');
        const ref: string = media.schema.$ref;
        let validate = compiled.get(ref);
        if (!validate) compiled.set(ref, (validate = ajv.compile({ $ref: `waveline:openapi${ref}` })));
        const body = await response.clone().json();
        expect(validate(body), `${req.method} ${schemaPath} ${response.status}: ${JSON.stringify(validate.errors)}`).to.equal(true);
        checked.push(`${req.method} ${schemaPath} ${response.status}`);
      },
    };
  });

  it('reads the station document, a content page and the next one by cursor, and now-playing; an error arrives typed with its code', async () => {
    const { station, ingestToken, listenerToken } = await ingestFixture(server.url);
    expect((await putType(server.url, station.id, 'news')).status).to.equal(200);
    const ids: string[] = [];
    for (const title of ['One', 'Two', 'Three']) ids.push(await published(server.url, station.id, 'news', { title }));
    expect((await ingest(server.url, station, ingestToken, { artist: 'Nina Simone', title: 'Sinnerman' })).status).to.equal(200);

    const waveline = createWavelineClient({ baseUrl: server.url, token: listenerToken });
    waveline.use(conforms);
    const path = { stationSlug: station.slug };

    const doc = await waveline.GET('/api/v1/stations/{stationSlug}', { params: { path } });
    expect(doc.response.status).to.equal(200);
    expect(doc.data?.id).to.equal(station.id);
    expect(doc.data?.slug).to.equal(station.slug);

    const first = await waveline.GET('/api/v1/stations/{stationSlug}/content', { params: { path, query: { type: 'news', limit: 2 } } });
    expect(first.data?.records.map((r) => r.id)).to.deep.equal([ids[2], ids[1]]);
    const cursor = first.data?.nextCursor;
    expect(cursor).to.be.a('string');
    const second = await waveline.GET('/api/v1/stations/{stationSlug}/content', {
      params: { path, query: { type: 'news', limit: 2, cursor: cursor! } },
    });
    expect(second.data?.records.map((r) => r.id)).to.deep.equal([ids[0]]);
    expect(second.data?.nextCursor).to.equal(null);

    const nowPlaying = await waveline.GET('/api/v1/stations/{stationSlug}/now-playing', { params: { path } });
    expect(nowPlaying.data?.track).to.include({ artist: 'Nina Simone', title: 'Sinnerman' });
    expect(nowPlaying.data?.freshness.status).to.equal('fresh');

    const anonymous = createWavelineClient({ baseUrl: server.url });
    anonymous.use(conforms);
    const refused = await anonymous.GET('/api/v1/stations/{stationSlug}/now-playing', { params: { path } });
    expect(refused.response.status).to.equal(401);
    expect(refused.data).to.equal(undefined);
    expect(refused.error?.error.code).to.equal('UNAUTHENTICATED');
    expect(refused.error?.error.requestId).to.equal(refused.response.headers.get('x-request-id'));

    const invalid = await waveline.GET('/api/v1/stations/{stationSlug}/content', { params: { path, query: { type: 'news', limit: 500 } } });
    expect(invalid.response.status).to.equal(400);
    expect(invalid.error?.error.code).to.equal('VALIDATION_ERROR');
    expect(invalid.error?.error.issues?.[0].path).to.equal('limit');

    expect(checked).to.have.length(6);
  });
});
