import { expect } from 'chai';
import fc from 'fast-check';
import { useClockedServer } from '../../support/server.ts';
import { admin, request } from '../../support/http.ts';
import { inboxFixture, type InboxFixture } from './helpers.ts';

// docs/inbox.md, "Hostile input": every field of every inbox route driven with generated values (any
// Unicode, control characters, markup, lone surrogates, wrong types, huge and empty values): never a 5xx,
// and what is taken is stored and answered exactly as sent (JSON-escaped, never altered). A fixed seed
// runs every time (FUZZ_SEED reruns another).

const SEED = Number(process.env.FUZZ_SEED ?? 20261215);
const RUNS = Number(process.env.FUZZ_INBOX_RUNS ?? 250);
const T0 = new Date('2026-12-15T10:00:00.000Z');

const hostileText = fc.oneof(
  { weight: 4, arbitrary: fc.string({ unit: 'grapheme', minLength: 1, maxLength: 60 }) },
  { weight: 2, arbitrary: fc.string({ unit: 'binary', minLength: 1, maxLength: 40 }) },
  {
    weight: 2,
    arbitrary: fc.constantFrom(
      '<script>alert(1)</script>',
      '"; DROP TABLE inbox_messages; --',
      '%00',
      '\u0000',
      'a\u0000b',
      '\ud800',
      '\u202e\u0645\u0631\u062d\u0628\u0627',
      '\r\n\r\ndata: injected\n\n',
      'id: 99\nevent: message',
      ' ',
      '\t',
      '\u{1F3B5}'.repeat(200),
      'x'.repeat(1001),
      '',
      'https://example.org',
      '\\',
      '{"a":1}',
    ),
  },
);
const anyValue = fc.oneof(
  hostileText,
  fc.integer(),
  fc.double(),
  fc.boolean(),
  fc.constant(null),
  fc.array(fc.string(), { maxLength: 2 }),
  fc.object({ maxDepth: 1 }),
);
/** Absent one time in three. */
const maybe = <T>(arb: fc.Arbitrary<T>) => fc.option(arb, { nil: undefined, freq: 3 });
/** Present one time in ten (a field no route knows). */
const rarely = <T>(arb: fc.Arbitrary<T>) => fc.oneof({ weight: 9, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary: arb });

/** encodeURIComponent that sends a lone surrogate as the (invalid) UTF-8 of its code unit instead of throwing. */
function encodeLoose(text: string): string {
  let out = '';
  for (const ch of text) {
    const code = ch.codePointAt(0)!;
    if (code >= 0xd800 && code <= 0xdfff)
      out += [0xe0 | (code >> 12), 0x80 | ((code >> 6) & 63), 0x80 | (code & 63)].map((b) => `%${b.toString(16).toUpperCase()}`).join('');
    else out += encodeURIComponent(ch);
  }
  return out;
}

/** Text a listener may well send: any graphemes, markup, SQL, SSE-looking lines, bidi controls, emoji. */
const listenerText = (max: number) =>
  fc.oneof(
    { weight: 6, arbitrary: fc.string({ unit: 'grapheme', minLength: 1, maxLength: max }) },
    {
      weight: 2,
      arbitrary: fc.constantFrom(
        '<script>alert(1)</script>',
        '<img src=x onerror=alert(1)>',
        '"; DROP TABLE inbox_messages; --',
        '\u202e\u0645\u0631\u062d\u0628\u0627',
        '\r\n\r\ndata: injected\n\n',
        'id: 99\nevent: message',
        ' ',
        '\t\u0001\u001f\u007f',
        '\u{1F3B5}\u200d\u{1F3B6}',
        '\\',
        '{"a":1}',
        '\u2028\u2029',
      ),
    },
  );

/** A well-formed body whose values are hostile content. */
const wellFormed = fc.record({
  clientId: fc.uuid(),
  kind: fc.constantFrom('message', 'dedication', 'request'),
  text: maybe(listenerText(200)),
  name: maybe(listenerText(80)),
  location: maybe(listenerText(80)),
  track: maybe(fc.record({ artist: listenerText(200), title: listenerText(200) })),
});

/** Any body at all: every field of any type, hostile values, fields no route knows. */
const anyBody = fc.record(
  {
    clientId: fc.oneof(fc.uuid(), anyValue),
    kind: fc.oneof(fc.constantFrom('message', 'dedication', 'request'), anyValue),
    text: fc.oneof(hostileText, anyValue),
    name: fc.oneof(hostileText, anyValue),
    location: fc.oneof(hostileText, anyValue),
    track: fc.oneof(fc.record({ artist: anyValue, title: anyValue, extra: rarely(anyValue) }, { requiredKeys: [] }), anyValue),
    extra: anyValue,
  },
  { requiredKeys: [] },
);

const messageBody = fc.oneof({ weight: 3, arbitrary: wellFormed }, { weight: 1, arbitrary: anyBody });

const address = fc.ipV4();

describe('inbox: hostile input on every field (property-based, fast-check)', function () {
  this.timeout(180_000);
  const { clock, server } = useClockedServer(T0);
  let f: InboxFixture;
  before(async () => {
    f = await inboxFixture(server.url, clock, {
      inbox: { perClientPerHour: 60, maxLength: 1000, trackRepeatMinutes: 0, artistRepeatMinutes: 0 },
    });
    await f.play('Fuzz', 'On Air');
  });

  const below500 = (res: { status: number; text: string }, what: unknown) =>
    expect(res.status, `${JSON.stringify(what)} → ${res.status} ${res.text.slice(0, 300)}`).to.be.below(500);

  it('POST …/inbox/messages: never 5xx; a taken message is stored and answered to the studio exactly as sent', async () => {
    let taken = 0;
    await fc.assert(
      fc.asyncProperty(messageBody, address, async (body, from) => {
        clock.advance(1000);
        const res = await f.send(body as Record<string, unknown>, { address: from });
        below500(res, body);
        if (res.status >= 400) {
          expect(res.body.error.code, res.text).to.be.oneOf(['VALIDATION_ERROR', 'REQUEST_REFUSED', 'RATE_LIMITED']);
          return;
        }
        expect(res.status, res.text).to.equal(202);
        taken++;
        const patched = await admin(server.url, 'PATCH', `/stations/${f.station.id}/inbox/messages/${res.body.id}`, { status: 'shown' });
        expect(patched.status, patched.text).to.equal(200);
        const sent = body as { text?: string; name?: string; location?: string; track?: { artist: string; title: string } };
        expect(patched.body.text).to.equal(sent.text ?? null);
        expect(patched.body.name).to.equal(sent.name ?? null);
        expect(patched.body.location).to.equal(sent.location ?? null);
        expect(patched.body.track).to.deep.equal(sent.track ? { artist: sent.track.artist, title: sent.track.title } : null);
      }),
      { seed: SEED, numRuns: RUNS, endOnFailure: true },
    );
    // The property means something only if many were taken.
    expect(taken).to.be.above(RUNS / 3);
  });

  it('PUT …/inbox/likes, GET …/inbox/requestable, DELETE …/inbox/clients/{clientId}: never 5xx', async () => {
    const base = `/api/v1/stations/${f.station.slug}/inbox`;
    await fc.assert(
      fc.asyncProperty(
        fc.record({
          clientId: fc.oneof(fc.uuid(), anyValue),
          value: fc.oneof(fc.constantFrom(1, -1, 0), anyValue),
          extra: rarely(anyValue),
        }),
        fc.oneof(hostileText, fc.constant('ab')),
        fc.oneof(fc.integer({ min: -5, max: 60 }).map(String), hostileText),
        fc.oneof(fc.uuid(), hostileText),
        async (vote, q, limit, clientId) => {
          below500(await request(server.url, 'PUT', `${base}/likes`, { token: f.token, json: vote }), vote);
          const query = `q=${encodeLoose(q)}&limit=${encodeLoose(limit)}`;
          const search = await request(server.url, 'GET', `${base}/requestable?${query}`, { token: f.token });
          below500(search, query);
          if (search.status === 200) for (const track of search.body.tracks) expect(track.title).to.be.a('string');
          below500(await request(server.url, 'DELETE', `${base}/clients/${encodeLoose(clientId)}`, { token: f.token }), clientId);
        },
      ),
      { seed: SEED, numRuns: Math.ceil(RUNS / 2), endOnFailure: true },
    );
  });

  it('the studio routes (list filters and cursors, PATCH, bans, erasure by pseudonym, tracks, stream resume): never 5xx', async () => {
    const { id } = (await f.message('target')).body;
    const admins = `/stations/${f.station.id}/inbox`;
    const stringOf = (v: unknown) => (typeof v === 'string' ? v : (JSON.stringify(v) ?? ''));
    await fc.assert(
      fc.asyncProperty(
        fc.record({ status: maybe(anyValue), kind: maybe(anyValue), limit: maybe(anyValue), cursor: maybe(anyValue) }),
        fc.oneof(fc.record({ status: fc.constantFrom('shown', 'answered', 'hidden') }), fc.record({ status: anyValue }), anyValue),
        fc.oneof(fc.record({ messageId: fc.constant(id), days: maybe(anyValue) }), fc.record({ messageId: anyValue }), anyValue),
        fc.oneof(hostileText, fc.stringMatching(/^[a-z2-7]{10}$/)),
        fc.record({ from: maybe(hostileText), to: maybe(hostileText) }),
        fc.oneof(hostileText, fc.nat().map(String)),
        async (listQuery, patch, ban, pseudonym, range, lastEventId) => {
          const qs = Object.entries(listQuery)
            .filter(([, v]) => v !== undefined)
            .map(([k, v]) => `${k}=${encodeLoose(stringOf(v))}`)
            .join('&');
          below500(await admin(server.url, 'GET', `${admins}/messages?${qs}`), qs);
          below500(await admin(server.url, 'PATCH', `${admins}/messages/${id}`, patch), patch);
          const banned = await admin(server.url, 'POST', `${admins}/bans`, ban);
          below500(banned, ban);
          if (banned.status === 201) expect((await admin(server.url, 'DELETE', `${admins}/bans/${banned.body.id}`)).status).to.equal(204);
          below500(await admin(server.url, 'DELETE', `${admins}/clients/${encodeLoose(pseudonym)}`), pseudonym);
          const rq = Object.entries(range)
            .filter(([, v]) => v !== undefined)
            .map(([k, v]) => `${k}=${encodeLoose(v as string)}`)
            .join('&');
          below500(await admin(server.url, 'GET', `${admins}/tracks?${rq}`), rq);
          const controller = new AbortController();
          const headers: Record<string, string> = { authorization: `Bearer ${process.env.WAVELINE_ADMIN_TOKEN}` };
          if (/^[\x20-\x7e]*$/.test(lastEventId)) headers['last-event-id'] = lastEventId;
          const stream = await fetch(`${server.url}/admin/v1${admins}/stream?lastEventId=${encodeLoose(lastEventId)}`, {
            headers,
            signal: controller.signal,
          });
          expect(stream.status, lastEventId).to.be.below(500);
          controller.abort();
        },
      ),
      { seed: SEED, numRuns: Math.ceil(RUNS / 3), endOnFailure: true },
    );
    // The message the fuzz shook is still itself.
    const [message] = (await f.list('limit=100')).filter((m: { id: string }) => m.id === id);
    expect(message.text).to.equal('target');
  });
});
