import { expect } from 'chai';
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { keepTickShapes, keptTick } from '../../src/lib/tickShapes.ts';

// lib/tickShapes.ts: one `process.nextTick` tick object kept for the process's life, so full collections
// never free the hidden classes of the tick literal (each freed set made the literal's inline cache see
// new maps, until every HTTP request paid runtime calls for its ticks: docs/benchmarks.md#the-tick-object-shapes).

const run = promisify(execFile);
const moduleUrl = new URL('../../src/lib/tickShapes.ts', import.meta.url).href;

/** The symbols Node keys every tick object by (the async ids, and in Node 22 the context frame). */
const tickSymbols = (object: object) =>
  Object.getOwnPropertySymbols(object)
    .map((symbol) => symbol.description)
    .sort();

async function nextTickObject(): Promise<object> {
  const { executionAsyncResource } = await import('node:async_hooks');
  return new Promise((resolve) => process.nextTick(() => resolve(executionAsyncResource())));
}

describe('keepTickShapes', () => {
  it('keeps a real tick object, once', async () => {
    keepTickShapes();
    const first = await nextTickObject().then(() => keptTick());
    expect(first).to.be.an('object');
    expect(tickSymbols(first!)).to.include.members(['async_id_symbol', 'trigger_async_id_symbol']);
    expect(first).to.have.property('callback').that.is.a('function');
    // Its shape is the one every later tick has.
    expect(tickSymbols(await nextTickObject())).to.deep.equal(tickSymbols(first!));
    keepTickShapes();
    await nextTickObject();
    expect(keptTick()).to.equal(first);
  });

  it('keeps the tick shape through full collections (a fresh process, V8 asked directly)', async () => {
    // The check V8 itself gives (`%HaveSameMap`): a tick made after three full collections has the very
    // map of the one kept before them. (What happens without one: `npm run bench:ticks`.)
    const script = `
      const { keepTickShapes, keptTick } = await import(${JSON.stringify(moduleUrl)});
      const { executionAsyncResource } = await import('node:async_hooks');
      const tick = () => new Promise((resolve) => process.nextTick(() => resolve(executionAsyncResource())));
      keepTickShapes();
      await tick();
      for (let i = 0; i < 3; i++) { for (let j = 0; j < 1000; j++) await tick(); globalThis.gc(); }
      const fresh = await tick();
      process.stdout.write(JSON.stringify({ kept: keptTick() !== null, same: %HaveSameMap(keptTick(), fresh) }));
    `;
    const { stdout } = await run(process.execPath, ['--allow-natives-syntax', '--expose-gc', '--input-type=module', '-e', script], {
      cwd: fileURLToPath(new URL('../..', import.meta.url)),
    });
    expect(JSON.parse(stdout)).to.deep.equal({ kept: true, same: true });
  });
});
