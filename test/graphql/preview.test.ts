import { expect } from 'chai';
import { randomUUID } from 'node:crypto';
import { sharedServer, startTestServer, type TestServer } from '../support/server.ts';
import { admin, request } from '../support/http.ts';
import { contentFixture, published, putRecord } from '../domains/content/helpers.ts';
import { ManualClock } from '../../src/lib/clock.ts';
import { gql } from './helpers.ts';

const MUTATION = 'mutation($input: PreviewInput) { previewEditorial(input: $input) { revision values document media { url } } }';

describe('editorial preview: grants, previewEditorial and POST /api/v1/preview/editorial', () => {
  let server: TestServer;
  before(async () => {
    server = await sharedServer();
  });

  async function draftFixture(target: TestServer = server) {
    const fx = await contentFixture(target);
    const id = await published(target.url, fx.station.id, 'news', { title: 'Published title', internal_note: 'hidden' });
    const draft = await putRecord(target.url, fx.station.id, id, {
      type: 'news',
      values: { title: 'Draft title', internal_note: 'hidden' },
    });
    expect(draft.body.revision).to.equal(2);
    const grant = await admin(target.url, 'POST', `/stations/${fx.station.id}/preview-grants`, { recordId: id, audience: 'web' });
    expect(grant.status, JSON.stringify(grant.body)).to.equal(201);
    return { ...fx, id, grant: grant.body.grant as string, expiresAt: grant.body.expiresAt as string };
  }

  it('issues a grant valid 15 minutes, only for a record of the same station', async () => {
    const fx = await draftFixture();
    expect(new Date(fx.expiresAt).getTime() - Date.now()).to.be.within(14 * 60_000, 15 * 60_000 + 1000);
    const other = await contentFixture(server);
    const foreign = await admin(server.url, 'POST', `/stations/${other.station.id}/preview-grants`, { recordId: fx.id });
    expect(foreign.status).to.equal(404);
    const unknown = await admin(server.url, 'POST', `/stations/${fx.station.id}/preview-grants`, { recordId: randomUUID() });
    expect(unknown.status).to.equal(404);
  });

  it('previews the latest draft (or a given revision) without private fields; the listener read still shows the published one', async () => {
    const fx = await draftFixture();
    const latest = await gql(
      server.url,
      fx.station.slug,
      fx.token,
      MUTATION,
      { input: { stationId: fx.station.id, recordId: fx.id } },
      { 'x-preview-grant': fx.grant },
    );
    expect(latest.body.errors, JSON.stringify(latest.body)).to.equal(undefined);
    expect(latest.body.data.previewEditorial.revision).to.equal(2);
    expect(latest.body.data.previewEditorial.values).to.deep.equal({ title: 'Draft title' });
    const first = await gql(
      server.url,
      fx.station.slug,
      fx.token,
      MUTATION,
      { input: { stationId: fx.station.id, recordId: fx.id, revision: 1, audience: 'web' } },
      { 'x-preview-grant': fx.grant },
    );
    expect(first.body.data.previewEditorial.values.title).to.equal('Published title');
    expect((await fx.get(`/content/${fx.id}`)).body.values.title).to.equal('Published title');
  });

  it('a missing grant, a grant for another record, and a forged grant are UNAUTHENTICATED', async () => {
    const fx = await draftFixture();
    const input = { stationId: fx.station.id, recordId: fx.id };
    const none = await gql(server.url, fx.station.slug, fx.token, MUTATION, { input });
    expect(none.body.errors[0].extensions.code).to.equal('UNAUTHENTICATED');
    expect(none.status).to.equal(401);
    const otherId = await published(server.url, fx.station.id, 'news', { title: 'Other' });
    const wrongRecord = await gql(
      server.url,
      fx.station.slug,
      fx.token,
      MUTATION,
      { input: { ...input, recordId: otherId } },
      { 'x-preview-grant': fx.grant },
    );
    expect(wrongRecord.body.errors[0].extensions.code).to.equal('UNAUTHENTICATED');
    const forged = await gql(
      server.url,
      fx.station.slug,
      fx.token,
      MUTATION,
      { input },
      { 'x-preview-grant': fx.grant.slice(0, -2) + 'xx' },
    );
    expect(forged.body.errors[0].extensions.code).to.equal('UNAUTHENTICATED');
  });

  it('input.stationId must be the station in the URL, else NOT_FOUND', async () => {
    const fx = await draftFixture();
    const res = await gql(
      server.url,
      fx.station.slug,
      fx.token,
      MUTATION,
      { input: { stationId: 'st_someoneelse', recordId: fx.id } },
      { 'x-preview-grant': fx.grant },
    );
    expect(res.body.errors[0].extensions.code).to.equal('NOT_FOUND');
  });

  it('is POST only', async () => {
    const fx = await draftFixture();
    const search = new URLSearchParams({
      query: MUTATION,
      variables: JSON.stringify({ input: { stationId: fx.station.id, recordId: fx.id } }),
    });
    const res = await request(server.url, 'GET', `/api/v1/stations/${fx.station.slug}/graphql?${search}`, {
      token: fx.token,
      headers: { 'x-preview-grant': fx.grant, accept: 'application/json' },
    });
    expect(res.status).to.equal(405);
  });

  it('an expired grant is UNAUTHENTICATED', async () => {
    const clock = new ManualClock();
    const own = await startTestServer({ clock });
    try {
      const fx = await draftFixture(own);
      clock.advance(15 * 60_000 + 1000);
      const res = await gql(
        own.url,
        fx.station.slug,
        fx.token,
        MUTATION,
        { input: { stationId: fx.station.id, recordId: fx.id } },
        { 'x-preview-grant': fx.grant },
      );
      expect(res.body.errors[0].extensions.code).to.equal('UNAUTHENTICATED');
    } finally {
      await own.close();
    }
  });

  it('the REST counterpart needs the credential and the grant', async () => {
    const fx = await draftFixture();
    const body = { stationId: fx.station.id, recordId: fx.id };
    const ok = await request(server.url, 'POST', '/api/v1/preview/editorial', {
      token: fx.token,
      json: body,
      headers: { 'x-preview-grant': fx.grant },
    });
    expect(ok.status, JSON.stringify(ok.body)).to.equal(200);
    expect(ok.body.values).to.deep.equal({ title: 'Draft title' });
    expect(ok.body.revision).to.equal(2);
    expect((await request(server.url, 'POST', '/api/v1/preview/editorial', { token: fx.token, json: body })).status).to.equal(401);
    expect(
      (await request(server.url, 'POST', '/api/v1/preview/editorial', { json: body, headers: { 'x-preview-grant': fx.grant } })).status,
    ).to.equal(401);
    expect(
      (
        await request(server.url, 'POST', '/api/v1/preview/editorial', {
          token: fx.token,
          json: { ...body, stationId: 'st_nope' },
          headers: { 'x-preview-grant': fx.grant },
        })
      ).status,
    ).to.equal(404);
    expect(
      (
        await request(server.url, 'POST', '/api/v1/preview/editorial', {
          token: fx.token,
          json: { ...body, recordId: 'x' },
          headers: { 'x-preview-grant': fx.grant },
        })
      ).status,
    ).to.equal(400);
  });
});
