import { expect } from 'chai';
import { spawn } from 'node:child_process';
import { repoRoot as root } from '../support/processes.ts';
import { sharedServer } from '../support/server.ts';
import { admin } from '../support/http.ts';
import { createStation } from '../support/factories.ts';

// The `waveline` CLI takes an operator key (docs/operations.md#operator-keys-and-the-audit-log):
// `waveline keys …` manages keys with the root key; `waveline admin --key …` (or WAVELINE_ADMIN_KEY)
// calls as that key, limited to its scopes and audited under it.

async function cli(args: string[], env: Record<string, string> = {}): Promise<{ code: number | null; out: string }> {
  const run = spawn(process.execPath, ['src/main.ts', ...args], {
    cwd: root,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  run.stdout!.on('data', (d) => (out += d));
  const code = await new Promise<number | null>((ok) => run.on('exit', ok));
  return { code, out };
}

describe('waveline keys and waveline admin --key (CLI)', function () {
  this.timeout(180_000);
  it('creates a key, calls with it within its scope, is refused outside it, and deletes it', async () => {
    const server = await sharedServer();
    const station = await createStation(server.url);
    const created = await cli(['keys', 'create', '--label', 'CLI station editor', '--stations', station.id, '--scopes', 'stations:write']);
    expect(created.code, created.out).to.equal(0);
    const key = JSON.parse(created.out);
    expect(key.key).to.match(/^wvo_[0-9A-Za-z]{40}$/);
    expect(key.stations).to.deep.equal([station.id]);

    const patched = await cli(['admin', '--key', key.key, 'PATCH', `/stations/${station.id}`, JSON.stringify({ name: 'Key FM 2' })]);
    expect(patched.code, patched.out).to.equal(0);
    const refused = await cli(['admin', 'POST', `/stations/${station.id}/credentials`, JSON.stringify({ scopes: ['listener:read'] })], {
      WAVELINE_ADMIN_KEY: key.key,
    });
    expect(refused.code).to.equal(1);
    expect(JSON.parse(refused.out).error.code).to.equal('FORBIDDEN');
    const audit = (await admin(server.url, 'GET', `/stations/${station.id}/audit`)).body;
    expect(
      audit.entries.map((e: { action: string; keyId: string; status: number }) => `${e.action} ${e.keyId === key.id} ${e.status}`),
    ).to.deep.equal(['credential.create true 403', 'station.update true 200']);

    expect((await cli(['keys', 'delete', key.id])).code).to.equal(0);
    expect((await admin(server.url, 'GET', `/operator-keys/${key.id}`)).status).to.equal(404);
  });
});
