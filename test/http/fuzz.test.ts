import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import fc from 'fast-check';
import { allRoutes } from '../../src/routes.ts';
import { ERROR_CODES } from '../../src/lib/errors.ts';
import { startTestServer, type TestServer } from '../support/server.ts';
import { createStation, createToken } from '../support/factories.ts';
import { ADMIN_TOKEN } from '../support/env.ts';
import { rawRequest, type RawReply, type RawRequest } from '../support/rawHttp.ts';

// Property: no request of any shape gets a 5xx while Postgres and Redis are up. Every route of the
// route table is driven with generated methods, path segments (NUL, invalid UTF-8, broken
// percent-encoding, overlong), query strings, headers and bodies; every answer carries x-request-id,
// and every non-2xx/3xx is the error body of docs/errors.md#error-codes with the code that belongs to its
// status (ingest: its own `{error: string}`). A fixed seed runs every time; then a short random run, whose
// seed fast-check prints when it fails (rerun with FUZZ_SEED=<seed>).

const FIXED_SEED = 20261124;
const FIXED_RUNS = Number(process.env.FUZZ_RUNS ?? 3000);
const RANDOM_RUNS = Number(process.env.FUZZ_RANDOM_RUNS ?? 500);

/** The codes a status may carry (docs/errors.md). */
const CODES_BY_STATUS: Record<number, string[]> = {
  400: ['VALIDATION_ERROR'],
  401: ['UNAUTHENTICATED'],
  403: ['FORBIDDEN'],
  404: ['NOT_FOUND', 'MODULE_DISABLED'],
  405: ['METHOD_NOT_ALLOWED'],
  406: ['NOT_ACCEPTABLE'],
  409: ['REVISION_CONFLICT', 'PROVIDER_MISMATCH', 'CONFLICT', 'REQUEST_REFUSED', 'NOTHING_PLAYING'],
  413: ['PAYLOAD_TOO_LARGE'],
  415: ['UNSUPPORTED_MEDIA_TYPE'],
  416: ['RANGE_NOT_SATISFIABLE'],
  429: ['RATE_LIMITED'],
};

/** Bytes that broke, or could break, a route: NUL, invalid UTF-8 and encodings of both. */
const HOSTILE_TEXT = [
  '%00',
  'a%00b',
  '%FF',
  '%C0%80',
  '%ED%A0%80',
  '%E2%82',
  '%',
  '%zz',
  '%2F',
  '..',
  '%2e%2e',
  '%F0%9F%8E%B5',
  '%EF%BF%BF',
  'x'.repeat(2000),
  '-1',
  '0',
  '1e999',
  'null',
  '[]',
];

interface Fixture {
  stationId: string;
  stationSlug: string;
  listener: string;
  push: string;
  ingest: string;
  inbox: string;
}

const segment = (valid: string) =>
  fc.oneof(
    { weight: 6, arbitrary: fc.constant(encodeURIComponent(valid)) },
    { weight: 3, arbitrary: fc.constantFrom(...HOSTILE_TEXT) },
    { weight: 1, arbitrary: fc.constant(randomUUID()) },
    { weight: 2, arbitrary: fc.string({ unit: 'binary', maxLength: 20 }).map(encodeURIComponentLoose) },
  );

/** encodeURIComponent that keeps lone surrogates as the (invalid) UTF-8 of their code unit. */
function encodeURIComponentLoose(text: string): string {
  let out = '';
  for (const ch of text) {
    const code = ch.codePointAt(0)!;
    if (code >= 0xd800 && code <= 0xdfff)
      out += [0xe0 | (code >> 12), 0x80 | ((code >> 6) & 63), 0x80 | (code & 63)].map((b) => `%${b.toString(16).toUpperCase()}`).join('');
    else out += encodeURIComponent(ch);
  }
  return out;
}

function validParam(name: string, f: Fixture): string {
  if (name === 'stationSlug') return f.stationSlug;
  if (name === 'stationId') return f.stationId;
  if (name === 'variant') return 'thumb';
  if (name === 'key' || name === 'type') return 'news';
  if (name === 'slug') return 'hello';
  return randomUUID();
}

const hostileString = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 30 }),
  fc.constantFrom('\u0000', 'a\u0000b', '\ud800', 'x\udfffy', '\uffff', 'x'.repeat(5000), '', ' '),
);

const jsonish: fc.Arbitrary<unknown> = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    hostileString,
    fc.integer(),
    fc.double(),
    fc.boolean(),
    fc.constant(null),
    fc.array(tie('value'), { maxLength: 4 }),
    fc.dictionary(
      fc.oneof(
        hostileString,
        fc.constantFrom('token', 'topics', 'query', 'slug', 'name', 'timezone', 'values', 'title', 'artist', 'observedAt'),
      ),
      tie('value'),
      { maxKeys: 5 },
    ),
  ),
})).value;

const bodyArb = fc.oneof(
  fc.constant<Buffer | undefined>(undefined),
  jsonish.map((v) => Buffer.from(JSON.stringify(v) ?? 'null')),
  fc.constantFrom(
    Buffer.from('{"query":"{ station { name } }"}'),
    Buffer.from('{"query":"{ station { "}'),
    Buffer.from('{"query":"{ nope }","variables":{"x":1}}'),
    Buffer.from(JSON.stringify({ query: '{ contentBySlug(type: "news", slug: "a\\u0000b") { id } }' })),
    Buffer.from(
      JSON.stringify({ query: `{ ${'a: station { id } '.repeat(3)}${'__type(name: "Station") { ofType { '.repeat(1)}name } } }` }),
    ),
    Buffer.from('{"token":"a\\u0000b","platform":"ios","provider":"fcm"}'),
    Buffer.concat([Buffer.from('{"name":"'), Buffer.from([0xff, 0xfe, 0xc0, 0x80]), Buffer.from('"}')]),
    Buffer.from('{"artist":"a","title":"\\u0000"}'),
    Buffer.from('{not json'),
    Buffer.from([0, 1, 2, 255]),
  ),
);

const queryArb = fc.oneof(
  fc.constant(''),
  fc
    .array(
      fc.tuple(
        fc.oneof(fc.constantFrom('limit', 'cursor', 'filter', 'type', 'query', 'fromDate', 'sort', 'foo'), segment('x')),
        segment('1'),
      ),
      { maxLength: 3 },
    )
    .map((pairs) => (pairs.length ? `?${pairs.map(([k, v]) => `${k}=${v}`).join('&')}` : '')),
);

function rightCredential(surface: string, f: Fixture): string | undefined {
  if (surface === 'admin') return ADMIN_TOKEN;
  if (surface === 'push') return f.push;
  if (surface === 'ingest') return f.ingest;
  return surface === 'listener' || surface === 'graphql' ? f.listener : undefined;
}

function requestArb(f: Fixture): fc.Arbitrary<RawRequest & { ingest: boolean; graphql: boolean }> {
  return fc.constantFrom(...allRoutes).chain((route) => {
    const names = [...route.path.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]);
    return fc
      .record({
        method: fc.oneof(
          { weight: 4, arbitrary: fc.constant(route.method.toUpperCase()) },
          { weight: 1, arbitrary: fc.constantFrom('GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS') },
        ),
        params: fc.tuple(...names.map((n) => segment(validParam(n, f)))),
        query: queryArb,
        auth: fc.oneof(
          { weight: 4, arbitrary: fc.constant(route.scope === 'inbox:write' ? f.inbox : rightCredential(route.surface, f)) },
          { weight: 1, arbitrary: fc.constantFrom(undefined, f.listener, f.push, f.ingest, ADMIN_TOKEN, 'wvl_\u0000', 'garbage') },
        ),
        contentType: fc.constantFrom(
          undefined,
          'application/json',
          'application/json',
          'application/json',
          'application/json; charset=utf-8',
          'text/plain',
          'application/x-www-form-urlencoded',
          'image/png',
          '\u00ff/\u00fe',
        ),
        accept: fc.constantFrom(undefined, '*/*', 'application/json', 'application/graphql-response+json', 'text/html', 'image/\u00ff'),
        extra: fc.constantFrom<Array<[string, string | Buffer]>>(
          [],
          [['If-None-Match', '"\u00ff"']],
          [['Range', 'bytes=0-\u00ff']],
          [['X-Request-Id', Buffer.from([0xc0, 0x80])]],
          [['X-Forwarded-For', '\u00ff, 1.2.3.4']],
          [['X-Preview-Grant', Buffer.from([0xff])]],
        ),
        body: bodyArb,
      })
      .map(({ method, params, query, auth, contentType, accept, extra, body }) => {
        let i = 0;
        const path = route.path.replace(/\{[^}]+\}/g, () => params[i++]);
        const headers: Array<[string, string | Buffer]> = [...extra];
        if (auth) headers.push(['Authorization', Buffer.from(`Bearer ${auth}`, 'latin1')]);
        if (contentType) headers.push(['Content-Type', Buffer.from(contentType, 'latin1')]);
        if (accept) headers.push(['Accept', Buffer.from(accept, 'latin1')]);
        return {
          method,
          target: Buffer.from(path + query, 'latin1'),
          headers,
          body,
          ingest: path.startsWith('/api/v1/integrations/'),
          graphql: route.surface === 'graphql',
        };
      });
  });
}

function checkReply(req: RawRequest & { ingest: boolean; graphql?: boolean }, reply: RawReply): void {
  const what = `${req.method} ${req.target.toString()} → ${reply.status} ${reply.body.toString('utf8').slice(0, 300)}`;
  expect(reply.status, what).to.be.below(500);
  expect(reply.headers['x-request-id'], what).to.be.a('string').and.not.equal('');
  if (reply.status < 400 || req.method === 'HEAD') return;
  // GraphQL answers in the media type the request's Accept asked for (GraphQL over HTTP: application/graphql-response+json or application/json).
  expect(reply.headers['content-type'], what).to.match(req.graphql ? /^application\/(graphql-response\+)?json/ : /^application\/json/);
  const body = JSON.parse(reply.body.toString('utf8'));
  if (req.ingest) {
    expect(body, what).to.have.keys(['error']);
    expect(body.error, what).to.be.a('string');
    return;
  }
  if (req.graphql && Array.isArray(body.errors)) {
    // A GraphQL response (the document was read): errors[] with messages; coded ones use our codes.
    for (const error of body.errors) {
      expect(error.message, what).to.be.a('string');
      if (error.extensions?.code !== undefined) expect(ERROR_CODES as readonly string[], what).to.include(error.extensions.code);
    }
    return;
  }
  expect(body.error, what).to.be.an('object');
  expect(body.error.requestId, what).to.equal(reply.headers['x-request-id']);
  expect(body.error.message, what).to.be.a('string');
  expect(ERROR_CODES as readonly string[], what).to.include(body.error.code);
  expect(CODES_BY_STATUS[reply.status] ?? [], what).to.include(body.error.code);
}

describe('hostile input on every route (property-based, fast-check)', function () {
  this.timeout(120_000);
  let server: TestServer;
  let fixture: Fixture;
  before(async () => {
    // Limits off: a 429 would hide what a route does with the input.
    server = await startTestServer({
      env: {
        RATE_LIMIT_LISTENER_PER_MINUTE: '0',
        RATE_LIMIT_GRAPHQL_PER_MINUTE: '0',
        RATE_LIMIT_PUSH_PER_MINUTE: '0',
        RATE_LIMIT_INGEST_PER_MINUTE: '0',
        RATE_LIMIT_ANONYMOUS_PER_MINUTE: '0',
      },
    });
    const station = await createStation(server.url, { modules: { inbox: true } });
    const token = async (scope: string) => (await createToken(server.url, station.id, [scope])).token;
    fixture = {
      stationId: station.id,
      stationSlug: station.slug,
      listener: await token('listener:read'),
      push: await token('push:register'),
      ingest: await token('ingest:write'),
      inbox: await token('inbox:write'),
    };
  });
  after(() => server.close());

  const seen = new Map<string, number>();
  const property = () =>
    fc.asyncProperty(requestArb(fixture), async (req) => {
      const reply = await rawRequest(server.url, req);
      const key = `${reply.status} ${req.target
        .toString('latin1')
        .split('?')[0]
        .replace(/[0-9a-f-]{36}|st-[a-z0-9-]+/g, ':id')
        .slice(0, 60)}`;
      seen.set(key, (seen.get(key) ?? 0) + 1);
      checkReply(req, reply);
    });
  after(() => {
    if (process.env.FUZZ_STATS)
      console.log(
        [...seen]
          .sort()
          .map(([k, n]) => `${n}\t${k}`)
          .join('\n'),
      );
  });

  it(`no 5xx, x-request-id everywhere, contract-shaped errors with the code of their status (fixed seed ${FIXED_SEED})`, async () => {
    await fc.assert(property(), { seed: Number(process.env.FUZZ_SEED ?? FIXED_SEED), numRuns: FIXED_RUNS, endOnFailure: true });
  });

  it('the same property on a short random run (its seed is printed when it fails)', async () => {
    await fc.assert(property(), { numRuns: RANDOM_RUNS, endOnFailure: true });
  });

  it("NUL and invalid UTF-8 in media path segments are 400 VALIDATION_ERROR, GET and HEAD, never 500 (the fuzzer's first find)", async () => {
    for (const method of ['GET', 'HEAD']) {
      for (const target of [
        `/api/media/public/%00/${randomUUID()}`,
        `/api/media/public/${fixture.stationId}/%00`,
        `/api/media/public/%00/${randomUUID()}/thumb`,
        `/api/media/public/${fixture.stationId}/${randomUUID()}/%00`,
        `/api/media/public/%FF%FE/${randomUUID()}`,
      ]) {
        const reply = await rawRequest(server.url, { method, target });
        expect(reply.status, `${method} ${target}`).to.equal(400);
        expect(reply.headers['x-request-id']).to.be.a('string');
        if (method === 'GET') expect(JSON.parse(reply.body.toString()).error.code).to.equal('VALIDATION_ERROR');
      }
    }
  });

  it('NUL and invalid UTF-8 in query strings, headers and JSON bodies are 400 VALIDATION_ERROR on REST, push and admin; ingest answers 400 in its own shape', async () => {
    const json = (text: string | Buffer) => (Buffer.isBuffer(text) ? text : Buffer.from(text));
    const cases: Array<RawRequest & { ingest?: boolean }> = [
      {
        method: 'GET',
        target: `/api/v1/stations/${fixture.stationSlug}/content?type=news&cursor=%00`,
        headers: [['Authorization', `Bearer ${fixture.listener}`]],
      },
      {
        method: 'GET',
        target: `/api/v1/stations/${fixture.stationSlug}/content?type=%C0%80`,
        headers: [['Authorization', `Bearer ${fixture.listener}`]],
      },
      {
        method: 'GET',
        target: `/api/v1/stations/${fixture.stationSlug}`,
        headers: [['Authorization', Buffer.from(`Bearer ${fixture.listener}\u0000`, 'latin1')]],
      },
      {
        method: 'POST',
        target: `/api/v1/stations/${fixture.stationSlug}/push/devices`,
        headers: [
          ['Authorization', `Bearer ${fixture.push}`],
          ['Content-Type', 'application/json'],
        ],
        body: json('{"token":"abc","platform":"ios","provider":"fcm","topics":{"alerts\\u0000":true}}'),
      },
      {
        method: 'POST',
        target: `/api/v1/stations/${fixture.stationSlug}/push/devices`,
        headers: [
          ['Authorization', `Bearer ${fixture.push}`],
          ['Content-Type', 'application/json'],
        ],
        body: Buffer.concat([json('{"token":"'), Buffer.from([0xc3, 0x28]), json('","platform":"ios","provider":"fcm"}')]),
      },
      {
        method: 'PATCH',
        target: `/admin/v1/stations/${fixture.stationId}`,
        headers: [
          ['Authorization', `Bearer ${ADMIN_TOKEN}`],
          ['Content-Type', 'application/json'],
        ],
        body: json('{"name":"Radio \\u0000"}'),
      },
      {
        method: 'PATCH',
        target: `/admin/v1/stations/${fixture.stationId}`,
        headers: [
          ['Authorization', `Bearer ${ADMIN_TOKEN}`],
          ['Content-Type', 'application/json'],
        ],
        body: json('{"name":"Radio \\ud800"}'),
      },
      {
        method: 'GET',
        target: `/api/v1/stations/${fixture.stationSlug}`,
        headers: [['Authorization', Buffer.concat([Buffer.from(`Bearer ${fixture.listener}`), Buffer.from([0xc3, 0x28])])]],
      },
      {
        method: 'GET',
        target: `/api/v1/stations/${fixture.stationSlug}`,
        headers: [
          ['Authorization', `Bearer ${fixture.listener}`],
          ['If-None-Match', Buffer.from([0x22, 0xff, 0x22])],
        ],
      },
      {
        method: 'POST',
        target: '/api/v1/integrations/playback',
        headers: [
          ['Authorization', Buffer.concat([Buffer.from(`Bearer ${fixture.ingest}`), Buffer.from([0xff])])],
          ['Content-Type', 'application/json'],
        ],
        body: json('{"artist":"a","title":"b"}'),
        ingest: true,
      },
      {
        method: 'POST',
        target: '/api/v1/integrations/playback?x=%00',
        headers: [
          ['Authorization', `Bearer ${fixture.ingest}`],
          ['Content-Type', 'application/json'],
        ],
        body: json('{"artist":"a","title":"b"}'),
        ingest: true,
      },
      {
        method: 'POST',
        target: '/api/v1/integrations/playback',
        headers: [
          ['Authorization', Buffer.from(`Bearer ${fixture.ingest}\u0000`, 'latin1')],
          ['Content-Type', 'application/json'],
        ],
        body: json('{"artist":"a","title":"b"}'),
        ingest: true,
      },
    ];
    for (const req of cases) {
      const reply = await rawRequest(server.url, req);
      const what = `${req.method} ${req.target.toString()} ${req.body?.toString('latin1') ?? ''} → ${reply.status} ${reply.body.toString()}`;
      expect(reply.status, what).to.equal(400);
      checkReply({ ...req, ingest: req.ingest ?? false }, reply);
    }
    const station = await rawRequest(server.url, {
      method: 'GET',
      target: `/admin/v1/stations/${fixture.stationId}`,
      headers: [['Authorization', `Bearer ${ADMIN_TOKEN}`]],
    });
    expect(JSON.parse(station.body.toString()).name, 'nothing stored').to.equal('Test FM');
  });
});
