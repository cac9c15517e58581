import { expect } from 'chai';
import { LoadingCache, TtlCache } from '../../src/lib/cache.ts';

// The cache behind the station and credential look-ups (lib/cache.ts): one load per key at a time, a
// key in use reloaded before its TTL runs out (so its readers never all miss at once and each query
// the database: docs/benchmarks.md#caches-that-reload-before-they-expire), and a load that began before a
// drop never stores what it read.

function deferred<T>() {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((ok) => (resolve = ok));
  return { promise, resolve };
}

async function until(check: () => boolean, what: string, ms = 5_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

const noError = (err: unknown) => {
  throw err;
};

describe('LoadingCache', () => {
  it('concurrent misses share one load', async () => {
    let loads = 0;
    const pending = deferred<string>();
    const cache = new LoadingCache<string, string>(60_000, () => (loads++, pending.promise), noError);
    const readers = Array.from({ length: 20 }, () => cache.getOrLoad('k'));
    pending.resolve('v');
    expect(await Promise.all(readers)).to.deep.equal(Array(20).fill('v'));
    expect(loads).to.equal(1);
    expect(cache.peek('k')).to.equal('v');
  });

  it('a key read near the end of its TTL is reloaded once, in the background, and never stops answering', async () => {
    let loads = 0;
    const ttl = 400;
    const cache = new LoadingCache<string, number>(ttl, async () => ++loads, noError);
    expect(await cache.getOrLoad('k')).to.equal(1);
    const loadedAt = Date.now();
    // Read continuously: every read answers from memory (never undefined), and the reload comes once,
    // in the last quarter of the TTL, before the entry would have expired.
    const seen: Array<number | undefined> = [];
    await until(() => (seen.push(cache.peek('k')), loads === 2 && cache.peek('k') === 2), 'the reload');
    expect(seen).not.to.include(undefined);
    expect(Date.now() - loadedAt).to.be.below(ttl * 2);
    expect(loads).to.equal(2);
  });

  it('a key not read is not reloaded, and expires', async () => {
    let loads = 0;
    const cache = new LoadingCache<string, number>(50, async () => ++loads, noError);
    await cache.getOrLoad('k');
    await new Promise((r) => setTimeout(r, 120)); // past the TTL, with no read in between
    expect(cache.peek('k')).to.equal(undefined);
    expect(loads).to.equal(1);
  });

  it('a load begun before a drop stores nothing, and a read after the drop does not share it', async () => {
    const answers = [deferred<string>(), deferred<string>()];
    let loads = 0;
    const cache = new LoadingCache<string, string>(60_000, () => answers[loads++].promise, noError);
    const before = cache.getOrLoad('k');
    cache.delete('k'); // an invalidation while the first load runs
    const after = cache.getOrLoad('k');
    expect(loads).to.equal(2);
    answers[0].resolve('old');
    answers[1].resolve('new');
    expect(await before).to.equal('old');
    expect(await after).to.equal('new');
    expect(cache.peek('k')).to.equal('new');
  });

  it('a failed load is not kept: the next read loads again', async () => {
    let loads = 0;
    const cache = new LoadingCache<string, string>(
      60_000,
      async () => {
        if (loads++ === 0) throw new Error('database unreachable');
        return 'v';
      },
      noError,
    );
    let failed: unknown;
    await cache.getOrLoad('k').catch((err: unknown) => (failed = err));
    expect(failed).to.be.instanceOf(Error);
    expect(await cache.getOrLoad('k')).to.equal('v');
  });
});

describe('TtlCache', () => {
  it('ages an entry by the time its caller gives (the credential last-use memo passes the gate clock read)', () => {
    const memo = new TtlCache<string, true>(60_000);
    const t = Date.UTC(2026, 10, 29, 7, 0, 0);
    memo.set('cr_1', true, t);
    expect(memo.get('cr_1', t + 59_999)).to.equal(true);
    expect(memo.get('cr_1', t + 60_000)).to.equal(undefined);
    // Dropped once expired: a later read at an earlier time does not bring it back.
    expect(memo.get('cr_1', t)).to.equal(undefined);
    // Without a time, the wall clock (an entry set an hour ago by the caller's clock has expired).
    memo.set('cr_2', true, Date.now() - 3_600_000);
    expect(memo.get('cr_2')).to.equal(undefined);
    memo.set('cr_3', true);
    expect(memo.get('cr_3')).to.equal(true);
  });
});
