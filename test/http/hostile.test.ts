import { expect } from 'chai';
import { sharedServer, type TestServer } from '../support/server.ts';
import { request, type Reply } from '../support/http.ts';
import { ADMIN_TOKEN } from '../support/env.ts';
import { createToken, listenerFixture } from '../support/factories.ts';
import { jsonIssue, MAX_JSON_DEPTH } from '../../src/http/hostile.ts';

/** `levels` arrays inside one another around `inner`, as JSON text. */
const nested = (levels: number, inner = '1'): string => `${'['.repeat(levels)}${inner}${']'.repeat(levels)}`;

/** "VALIDATION_ERROR: invalid parameters or input; HTTP 400", in the listener error body, naming the issue. */
function expectRefused(res: Reply, path: RegExp, code: string): void {
  expect(res.status, res.text).to.equal(400);
  expect(res.body.error.code, res.text).to.equal('VALIDATION_ERROR');
  expect(res.body.error.requestId).to.equal(res.headers.get('x-request-id'));
  expect(res.body.error.issues[0].path, res.text).to.match(path);
  expect(res.body.error.issues[0].code, res.text).to.equal(code);
}

describe('hostile input: JSON nested deeper than any payload is 400, never a 500', () => {
  let server: TestServer;
  let slug: string;
  let stationId: string;
  let listener: string;
  let push: string;
  before(async () => {
    server = await sharedServer();
    const fixture = await listenerFixture(server.url);
    ({ slug, id: stationId } = fixture.station);
    listener = fixture.token;
    push = (await createToken(server.url, stationId, ['push:register'])).token;
  });

  it('jsonIssue finds the first unstorable string in document order and refuses nesting past MAX_JSON_DEPTH, whatever the depth', () => {
    expect(jsonIssue(JSON.parse(nested(MAX_JSON_DEPTH)))).to.equal(null);
    expect(jsonIssue(JSON.parse(nested(MAX_JSON_DEPTH + 1)))).to.include({ code: 'too_deep' });
    expect(jsonIssue(JSON.parse(nested(500_000)), 'variables')).to.include({ code: 'too_deep' });
    expect(jsonIssue({ a: ['ok', 'x\u0000'], 'b\ud800': 1 })).to.include({ path: 'a.1', code: 'invalid_format' });
    expect(jsonIssue({ a: 'ok', 'b\ud800': 'x\u0000' })).to.include({ path: 'b\ud800', code: 'invalid_format' });
    expect(jsonIssue('x\u0000')).to.include({ path: 'body' });
  });

  it('a GraphQL POST whose variables nest 30 000 deep is 400 VALIDATION_ERROR in the REST body', async () => {
    const body = `{"query":"{ station { id } }","variables":{"a":${nested(30_000)}}}`;
    const res = await request(server.url, 'POST', `/api/v1/stations/${slug}/graphql`, {
      token: listener,
      body,
      headers: { 'content-type': 'application/json', accept: 'application/json' },
    });
    expectRefused(res, /^variables\.a(\.0)+$/, 'too_deep');
  });

  it('a GraphQL GET whose variables nest 3 500 deep is 400 VALIDATION_ERROR', async () => {
    // Brackets unencoded, so the URL stays under Node's 16 KiB request head.
    const variables = `${encodeURIComponent('{"a":')}${nested(3_500)}}`;
    const res = await request(
      server.url,
      'GET',
      `/api/v1/stations/${slug}/graphql?query=%7B%20station%20%7B%20id%20%7D%20%7D&variables=${variables}`,
      {
        token: listener,
        headers: { accept: 'application/json' },
      },
    );
    expect(res.status, res.text).to.equal(400);
    expect(res.body.error.issues[0]).to.include({ code: 'too_deep' });
  });

  it('push and admin JSON bodies nested 400 000 deep are 400 VALIDATION_ERROR', async () => {
    const pushed = await request(server.url, 'POST', `/api/v1/stations/${slug}/push/devices`, {
      token: push,
      body: `{"token":${nested(400_000)}}`,
      headers: { 'content-type': 'application/json' },
    });
    expect(pushed.status, pushed.text).to.equal(400);
    expect(pushed.body.error.issues[0]).to.include({ code: 'too_deep' });
    const patched = await request(server.url, 'PATCH', `/admin/v1/stations/${stationId}`, {
      token: ADMIN_TOKEN,
      body: `{"profile":${nested(400_000, '{}')}}`,
      headers: { 'content-type': 'application/json' },
    });
    expect(patched.status, patched.text).to.equal(400);
    expect(patched.body.error.issues[0]).to.include({ code: 'too_deep' });
  });

  it('nesting up to the bound is no error of its own: the route validates the value as usual', async () => {
    const res = await request(server.url, 'POST', `/api/v1/stations/${slug}/graphql`, {
      token: listener,
      body: `{"query":"{ station { id } }","variables":{"a":${nested(MAX_JSON_DEPTH - 2)}}}`,
      headers: { 'content-type': 'application/json', accept: 'application/json' },
    });
    expect(res.status, res.text).to.equal(200);
    expect(res.body.data.station.id).to.equal(stationId);
  });
});
