import { expect } from 'chai';
import { useSharedServerWithWorkers } from '../../support/server.ts';
import { createStation, eventually } from '../../support/factories.ts';
import { asKey, createKey } from '../operatorKeys/helpers.ts';

// Artwork admin routes need the operator-key scope `artwork:write` and are audited
// (docs/now-playing.md#the-artwork-setting-and-the-admin-routes, docs/operations.md#the-audit-log).

describe('artwork: scope artwork:write and the audit trail', () => {
  const { server } = useSharedServerWithWorkers();

  it('a key with artwork:write pins and reads; a key without it gets 403; each write is an audit entry', async () => {
    const station = await createStation(server.url);
    const writer = await createKey(server.url, { stations: [station.id], scopes: ['artwork:write'] });
    const other = await createKey(server.url, { stations: [station.id], scopes: ['content:write'] });
    const path = `/stations/${station.id}/artwork/pins/jingles`;
    const body = { match: { artist: 'Station ID' }, image: null };
    expect((await asKey(server.url, other.key, 'PUT', path, body)).status).to.equal(403);
    expect((await asKey(server.url, other.key, 'GET', `/stations/${station.id}/artwork/recent`)).status).to.equal(403);
    const put = await asKey(server.url, writer.key, 'PUT', path, body);
    expect(put.status, JSON.stringify(put.body)).to.equal(201);
    expect((await asKey(server.url, writer.key, 'GET', `/stations/${station.id}/artwork/recent?limit=5`)).body).to.deep.equal({
      tracks: [],
    });
    expect((await asKey(server.url, writer.key, 'DELETE', path)).status).to.equal(204);
    const actions = await eventually(async () => {
      const rows: Array<{ action: string; status: number }> = await server.svc
        .db('audit_log')
        .where({ station_id: station.id })
        .orderBy('created_at');
      const mine = rows.filter((r) => r.action.startsWith('artwork.')).map((r) => `${r.action} ${r.status}`);
      return mine.length >= 2 ? mine : null;
    });
    expect(actions).to.include.members(['artwork.pin 201', 'artwork.unpin 204']);
  });
});
