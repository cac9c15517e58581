import { expect } from 'chai';
import { Type } from '@sinclair/typebox';
import { registerStationSetting, registerStreamField, stationSettings } from '../../../src/domains/stations/settings.ts';
import { onStationChanged, stationChange, stationChanged, type StationChange } from '../../../src/domains/stations/changes.ts';
import type { Station } from '../../../src/domains/stations/model.ts';
import { AdminStation, CreateStationBody, StationDocument } from '../../../src/domains/stations/schemas.ts';
import { sharedServer, type TestServer } from '../../support/server.ts';
import { admin } from '../../support/http.ts';
import { createStation } from '../../support/factories.ts';

// docs/architecture.md, "A feature's station setting": features contribute their station settings
// through one registry the core defines, and follow station changes through one hook.

describe('station settings registry', () => {
  const keys = () => stationSettings().map((s) => s.key as string);

  it('holds the features of src/features.ts in their order: radiodns before podcasts', () => {
    const found = stationSettings().filter((s) => ['radiodns', 'podcasts'].includes(s.key));
    expect(found.map((s) => [s.key, s.column, s.patch])).to.deep.equal([
      ['radiodns', 'radiodns', 'merge'],
      ['podcasts', 'podcasts', 'replace'],
    ]);
  });

  it('builds the station schemas from it: bodies, the admin view (before the timestamps) and the document’s resources', () => {
    const create = Object.keys(CreateStationBody.properties);
    expect(create.slice(create.indexOf('publicOnline') + 1)).to.deep.equal(keys());
    const view = Object.keys(AdminStation.properties);
    expect(view.slice(view.indexOf('upNext') + 1)).to.deep.equal([...keys(), 'createdAt', 'updatedAt']);
    const resources = Object.keys(StationDocument.properties.resources.properties);
    const features = stationSettings().flatMap(({ resource }) => (resource ? [resource.name] : []));
    expect(features).to.include('podcast');
    expect(resources.slice(resources.indexOf('media'))).to.deep.equal(['media', ...features, 'realtime']);
  });

  it('refuses a registration once the station schemas are built, naming it (it would be missing from them)', () => {
    const late = {
      key: 'late',
      column: 'late',
      input: Type.Object({}),
      output: Type.Object({}),
      patch: 'merge',
      fromStored: () => ({}),
      fromInput: () => ({}),
    } as unknown as Parameters<typeof registerStationSetting>[0];
    expect(() => registerStationSetting(late)).to.throw(/station setting "late" registered after the station schemas were built/);
    const field = { key: 'late', input: Type.String(), output: Type.String(), fromStored: () => null } as unknown as Parameters<
      typeof registerStreamField
    >[0];
    expect(() => registerStreamField(field)).to.throw(/stream entry field "late" registered after/);
  });
});

describe('stationChanged', () => {
  let server: TestServer;
  const seen: StationChange[] = [];
  let unsubscribe: () => void;
  before(async () => {
    server = await sharedServer();
    unsubscribe = onStationChanged('test: record', (_svc, change) => void seen.push(change));
  });
  after(() => unsubscribe());

  const station = (overrides: Partial<Station>): Station =>
    ({ id: 'x', name: 'A', upNext: { enabled: false, count: 1 }, ...overrides }) as Station;

  it('names the keys whose value changed (every key on create, none for the same value again)', () => {
    expect([...stationChange(null, station({})).changed]).to.deep.equal(['id', 'name', 'upNext']);
    expect([...stationChange(station({}), station({ upNext: { enabled: true, count: 1 } })).changed]).to.deep.equal(['upNext']);
    expect(stationChange(station({}), station({})).changed.size).to.equal(0);
  });

  it('runs after an admin create and patch, with before/after and what changed; not for a PATCH that changes nothing', async () => {
    const created = await createStation(server.url);
    const mine = () => seen.filter((c) => c.after.id === created.id);
    expect(mine().map((c) => c.before)).to.deep.equal([null]);
    const patch = { upNext: { enabled: true } };
    expect((await admin(server.url, 'PATCH', `/stations/${created.id}`, patch)).status).to.equal(200);
    expect((await admin(server.url, 'PATCH', `/stations/${created.id}`, patch)).status).to.equal(200);
    expect(mine()).to.have.length(2);
    const [, update] = mine();
    expect(update.before?.upNext).to.deep.equal({ enabled: false, count: 1 });
    expect(update.after.upNext).to.deep.equal({ enabled: true, count: 1 });
    expect([...update.changed].sort()).to.deep.equal(['upNext', 'updatedAt']);
  });

  it('a failing listener is logged and the others still run', async () => {
    const ran: string[] = [];
    const errors: unknown[] = [];
    const logger = { error: (fields: unknown) => void errors.push(fields) } as unknown as Parameters<typeof stationChanged>[0]['logger'];
    const subscriptions = [
      onStationChanged('test: fails', () => Promise.reject(new Error('boom'))),
      onStationChanged('test: after', (_svc, change) => void ran.push(change.after.id)),
    ];
    try {
      await stationChanged({ ...server.svc, logger }, stationChange(null, station({ id: 'failing' })));
    } finally {
      for (const unsubscribe of subscriptions) unsubscribe();
    }
    expect(ran).to.deep.equal(['failing']);
    expect(errors).to.have.length.of.at.least(1);
  });
});
