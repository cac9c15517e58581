import { spawnSync } from 'node:child_process';
import { expect } from 'chai';
import { newRequestId, requestIdFrom } from '../../src/lib/ids.ts';

// Request ids the service makes (src/lib/ids.ts): UUID-shaped, unique, without drawing randomness per
// request; the client's own id is kept when it is a sane token.

const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

describe('request ids', () => {
  it('are version-4 UUID-shaped and never repeat in a process', () => {
    const ids = Array.from({ length: 10_000 }, () => newRequestId());
    for (const id of ids) expect(id).to.match(UUID_V4);
    expect(new Set(ids).size).to.equal(ids.length);
  });

  it('differ between processes (the random part is drawn per process)', () => {
    const script = "import('./src/lib/ids.ts').then((m) => console.log(m.newRequestId()))";
    const run = () => {
      const child = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' });
      expect(child.status, child.stderr).to.equal(0);
      return child.stdout.trim();
    };
    const [a, b] = [run(), run()];
    expect(a).to.match(UUID_V4);
    expect(b).to.match(UUID_V4);
    // Both processes' first id: the counts agree, so the random parts must not.
    expect(a.slice(24)).to.equal(b.slice(24));
    expect(a.slice(0, 24)).to.not.equal(b.slice(0, 24));
  });

  it("keep the client's X-Request-Id when it is a sane token, else make one", () => {
    expect(requestIdFrom('abc-123.x:y_z')).to.equal('abc-123.x:y_z');
    expect(requestIdFrom('has space')).to.match(UUID_V4);
    expect(requestIdFrom('x'.repeat(129))).to.match(UUID_V4);
    expect(requestIdFrom(undefined)).to.match(UUID_V4);
  });
});
