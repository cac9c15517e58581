import { expect } from 'chai';
import { laterVersion, ReadCache, Representation, UnkeptAnswer } from '../../src/lib/readCache.ts';

// The in-memory store behind the listener reads (lib/readCache.ts): its own rules, beside the HTTP
// tests in test/http/readCache.test.ts.

const rep = (text: string, validUntil = Infinity) => new Representation(Buffer.from(text), 'text/plain', validUntil);

function deferred<T>() {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((ok) => (resolve = ok));
  return { promise, resolve };
}

describe('ReadCache', () => {
  it('an answer computed while its area was invalidated is served to its callers but not kept', async () => {
    const cache = new ReadCache(1 << 20, 60_000);
    const pending = deferred<Representation>();
    const answer = cache.read('k', 'st', 'content', 0, () => pending.promise);
    cache.drop('st', 'content'); // a write committed while the read ran
    pending.resolve(rep('old'));
    expect((await answer).bytes.toString()).to.equal('old');
    expect(cache.peek('k', 0)).to.equal(undefined);
    // A computation that saw no invalidation is kept.
    await cache.read('k', 'st', 'content', 0, async () => rep('new'));
    expect(cache.peek('k', 0)?.bytes.toString()).to.equal('new');
  });

  describe('refresh-ahead', () => {
    /** A key whose answer is the n-th computation; its refresh computes it again the same way. */
    function refreshable(cache: ReadCache, area: 'nowPlaying' | readonly ('nowPlaying' | 'schedule')[] = 'nowPlaying') {
      let runs = 0;
      let gate: Promise<void> = Promise.resolve();
      const compute = async () => {
        runs++;
        const n = runs;
        await gate;
        return rep(`answer ${n}`);
      };
      const refresh = (readAt: number) => cache.recompute('k', 'st', area, 0, compute, refresh, readAt);
      const read = () => cache.read('k', 'st', area, 0, compute, refresh);
      return {
        read,
        runs: () => runs,
        hold() {
          let open!: () => void;
          gate = new Promise((ok) => (open = ok));
          return () => open();
        },
      };
    }
    const settled = () => new Promise((ok) => setImmediate(ok));

    it('a dropped answer that was read from the cache is computed again at once, with no read', async () => {
      const cache = new ReadCache(1 << 20, 60_000);
      const key = refreshable(cache);
      await key.read(); // computed and kept
      expect(cache.peek('k', 0)?.bytes.toString()).to.equal('answer 1'); // read from the cache
      cache.drop('st', 'nowPlaying');
      await settled();
      expect(key.runs()).to.equal(2);
      expect(cache.peek('k', 0)?.bytes.toString(), 'the new answer is there before anyone asks').to.equal('answer 2');
      // The refreshed answer is as hot as the one it replaced: the next write refreshes it too.
      cache.drop('st', 'nowPlaying');
      await settled();
      expect(key.runs()).to.equal(3);
      expect(cache.peek('k', 0)?.bytes.toString()).to.equal('answer 3');
    });

    it('an answer never read from the cache, another area, or a station change (every area) is not refreshed', async () => {
      const cache = new ReadCache(1 << 20, 60_000);
      const key = refreshable(cache);
      await key.read(); // computed, never read back
      cache.drop('st', 'nowPlaying');
      await settled();
      expect(key.runs()).to.equal(1);
      expect(cache.size).to.equal(0);

      await key.read();
      cache.peek('k', 0);
      cache.drop('st', 'content'); // not its area: kept, nothing computed
      cache.drop('st'); // the station changed: dropped, nothing computed with its old settings
      await settled();
      expect(key.runs()).to.equal(2);
      expect(cache.size).to.equal(0);
    });

    it('a read while the refresh runs joins it; an answer of several areas is refreshed when one of them is dropped', async () => {
      const cache = new ReadCache(1 << 20, 60_000);
      const key = refreshable(cache, ['nowPlaying', 'schedule']);
      await key.read();
      cache.peek('k', 0);
      const open = key.hold();
      cache.drop('st', 'schedule');
      const joined = key.read();
      expect(key.runs(), 'the read joined the refresh').to.equal(2);
      open();
      expect((await joined).bytes.toString()).to.equal('answer 2');
      expect(cache.peek('k', 0)?.bytes.toString()).to.equal('answer 2');
    });

    it('a write heard while the refresh runs keeps its answer out and starts it again', async () => {
      const cache = new ReadCache(1 << 20, 60_000);
      const key = refreshable(cache);
      await key.read();
      cache.peek('k', 0);
      const open = key.hold();
      cache.drop('st', 'nowPlaying'); // refresh 1 starts, held
      expect(key.runs()).to.equal(2);
      cache.drop('st', 'nowPlaying'); // the same write heard again (the writing process: at once, then from the bus)
      expect(key.runs(), 'computed again for the newer generation').to.equal(3);
      open();
      await settled();
      await settled();
      expect(cache.peek('k', 0)?.bytes.toString(), 'the answer begun after the last write').to.equal('answer 3');
    });
  });

  it('an invalidation of another area or station keeps the answer; the station topic drops every area', async () => {
    const cache = new ReadCache(1 << 20, 60_000);
    await cache.read('c', 'st', 'content', 0, async () => rep('c'));
    await cache.read('s', 'st', 'schedule', 0, async () => rep('s'));
    cache.drop('st', 'nowPlaying');
    cache.drop('other', 'content');
    expect(cache.size).to.equal(2);
    cache.drop('st');
    expect(cache.size).to.equal(0);
    expect(cache.usedBytes).to.equal(0);
  });

  it('concurrent misses of one key share one computation, unless an invalidation came in between', async () => {
    const cache = new ReadCache(1 << 20, 60_000);
    let runs = 0;
    const pending = deferred<Representation>();
    const compute = () => {
      runs++;
      return pending.promise;
    };
    const first = cache.read('k', 'st', 'content', 0, compute);
    const second = cache.read('k', 'st', 'content', 0, compute);
    expect(runs).to.equal(1);
    cache.drop('st', 'content');
    const third = cache.read('k', 'st', 'content', 0, async () => rep('fresh'));
    pending.resolve(rep('stale'));
    expect((await first).bytes.toString()).to.equal('stale');
    expect((await second).bytes.toString()).to.equal('stale');
    expect((await third).bytes.toString(), 'a read after the write never joins the older computation').to.equal('fresh');
    expect(cache.peek('k', 0)?.bytes.toString()).to.equal('fresh');
  });

  it('a read that joins a running computation whose answer is out of date at its own time computes afresh', async () => {
    const cache = new ReadCache(1 << 20, 60_000);
    const pending = deferred<Representation>();
    const first = cache.read('k', 'st', 'nowPlaying', 1000, () => pending.promise);
    const late = cache.read('k', 'st', 'nowPlaying', 2000, async () => rep('age 2', 3000));
    pending.resolve(rep('age 1', 2000));
    expect((await first).bytes.toString()).to.equal('age 1');
    expect((await late).bytes.toString()).to.equal('age 2');
  });

  it('a computation begun by key alone (GraphQL) is joined until it ends, and only while no area of the station was invalidated', async () => {
    const cache = new ReadCache(1 << 20, 60_000);
    expect(cache.running('g', 'st')).to.equal(undefined);
    const first = cache.begin('g', 'st');
    const joined = cache.running('g', 'st');
    expect(joined, 'the same request meanwhile joins it').to.not.equal(undefined);
    first.end(rep('answer'));
    expect((await joined!).bytes.toString()).to.equal('answer');
    expect(cache.running('g', 'st'), 'an ended computation is joined no more').to.equal(undefined);

    cache.begin('g', 'st');
    cache.drop('st', 'weather'); // a write to any area: the answer's areas are not known before it has run
    expect(cache.running('g', 'st'), 'a request after the write never joins the older computation').to.equal(undefined);
  });

  it('a computation begun by key alone that has no answer to share rejects those who joined it; alone, it rejects nobody', async () => {
    const cache = new ReadCache(1 << 20, 60_000);
    const flight = cache.begin('g', 'st');
    const joined = cache.running('g', 'st')!;
    flight.end();
    let refused: unknown;
    await joined.catch((err: unknown) => (refused = err));
    expect(refused).to.be.instanceOf(Error);
    // An answer not kept (an error's) is given to those who waited, as it is.
    const failing = cache.begin('u', 'st');
    const waited = cache.running('u', 'st')!;
    const unkept = new UnkeptAnswer(503, Buffer.from('{"errors":[]}'), 'application/json', '2');
    failing.end(unkept);
    expect(
      await waited.then(
        () => null,
        (err: unknown) => err,
      ),
    ).to.equal(unkept);
    expect(cache.peek('u', 0), 'and never kept').to.equal(undefined);
    // Ended without an answer and without anyone waiting: no unhandled rejection (mocha would report one).
    cache.begin('h', 'st').end();
    await new Promise((r) => setImmediate(r));
    expect(cache.running('h', 'st')).to.equal(undefined);
  });

  it('an answer is served until its validUntil, never at or past it', async () => {
    const cache = new ReadCache(1 << 20, 60_000);
    await cache.read('k', 'st', 'nowPlaying', 1000, async () => rep('age 1', 2000));
    expect(cache.peek('k', 1999)?.bytes.toString()).to.equal('age 1');
    expect(cache.peek('k', 2000)).to.equal(undefined);
  });

  describe('answers that move only with time (Representation.later)', () => {
    /** An answer "age N" that ages by a second every 1000 ms until `until`, counting its derivations. */
    function ageing(until = Infinity) {
      let derived = 0;
      const at = (nowMs: number): Representation =>
        rep(`age ${Math.floor(nowMs / 1000)}`, Math.min((Math.floor(nowMs / 1000) + 1) * 1000, until)).derivesLater((later) => {
          if (later >= until) return undefined;
          derived++;
          return at(later);
        });
      return { at, derived: () => derived };
    }

    it('an expired answer is derived at the new instant in its place, with no computation, and keeps its byte count exact', async () => {
      const cache = new ReadCache(1 << 20, 60_000);
      const answer = ageing();
      let computed = 0;
      const compute = async () => (computed++, answer.at(1000));
      await cache.read('k', 'st', 'nowPlaying', 1000, compute);
      const held = cache.usedBytes;
      expect(cache.peek('k', 1999)?.bytes.toString()).to.equal('age 1');
      expect((await cache.read('k', 'st', 'nowPlaying', 2000, compute)).bytes.toString()).to.equal('age 2');
      expect(cache.peek('k', 12_500)?.bytes.toString()).to.equal('age 12');
      expect(computed, 'computed once').to.equal(1);
      expect(answer.derived()).to.equal(2);
      expect(cache.usedBytes, 'one more digit').to.equal(held + 1);
    });

    it('is computed again when it cannot be derived (a change became audible), after a write of its area, and past its safety age', async () => {
      const cache = new ReadCache(1 << 20, 60_000);
      let computed = 0;
      const compute = async () => (computed++, ageing(5000).at(1000));
      await cache.read('k', 'st', 'nowPlaying', 1000, compute);
      expect(cache.peek('k', 4000)?.bytes.toString()).to.equal('age 4');
      expect(cache.peek('k', 5000), 'no derivation at or past `until`').to.equal(undefined);
      await cache.read('k', 'st', 'nowPlaying', 1000, compute);
      cache.drop('st', 'nowPlaying');
      expect(cache.peek('k', 2000), 'dropped by a write: not derived').to.equal(undefined);
      expect(computed).to.equal(2);

      const aged = new ReadCache(1 << 20, 0); // every entry past its safety age at once
      await aged.read('k', 'st', 'nowPlaying', 1000, async () => ageing().at(1000));
      expect(aged.peek('k', 2000), 'a derivation keeps the safety age of the data it came from').to.equal(undefined);
    });
  });

  describe('seeds (an answer a write sent with its invalidation)', () => {
    const versioned = (text: string, version: number[]) => rep(text).at(version);

    it('is put in place while the refresh computes, which replaces it; one showing no more than an answer stored before is ignored', async () => {
      const cache = new ReadCache(1 << 20, 60_000);
      let release!: () => void;
      let computed = 0;
      const compute = async () => {
        computed++;
        await new Promise<void>((ok) => (release = ok));
        return versioned('from the database', [2, 1]);
      };
      const refresh = (readAt: number, seed?: string) => {
        cache.recompute('k', 'st', 'nowPlaying', 0, compute, refresh, readAt);
        if (seed !== undefined) cache.seed('k', 'st', 'nowPlaying', versioned(seed, [2, 1]), 0, refresh, readAt);
      };
      await cache.read('k', 'st', 'nowPlaying', 0, async () => versioned('first', [1, 7]), refresh);
      expect(cache.peek('k', 0)?.bytes.toString()).to.equal('first'); // read from the cache: refreshed at a drop
      cache.drop('st', 'nowPlaying', 'seeded');
      expect(cache.peek('k', 0)?.bytes.toString(), 'at once, while the computation runs').to.equal('seeded');
      expect(computed).to.equal(1);
      release();
      await new Promise((ok) => setImmediate(ok));
      expect(cache.peek('k', 0)?.bytes.toString()).to.equal('from the database');
      // Heard late: the seed of a write older than (or the same as) what is kept is not put in place.
      expect(cache.seed('k', 'st', 'nowPlaying', versioned('older', [1, 9]), 0, refresh, 0)).to.equal(false);
      expect(cache.seed('k', 'st', 'nowPlaying', versioned('same', [2, 1]), 0, refresh, 0)).to.equal(false);
      expect(cache.seed('k', 'st', 'nowPlaying', rep('no version'), 0, refresh, 0)).to.equal(false);
      expect(cache.peek('k', 0)?.bytes.toString()).to.equal('from the database');
      expect(cache.seed('k', 'st', 'nowPlaying', versioned('newer', [2, 2]), 0, refresh, 0)).to.equal(true);
    });

    it('the same seed heard again (the writing process hears its own change from the bus too) is put back, until a computation showed its version', async () => {
      const cache = new ReadCache(1 << 20, 60_000);
      const computations: Array<() => void> = [];
      const compute = () => new Promise<Representation>((ok) => computations.push(() => ok(versioned('from the database', [2, 1]))));
      const refresh = (readAt: number, seed?: string) => {
        cache.recompute('k', 'st', 'nowPlaying', 0, compute, refresh, readAt);
        if (seed !== undefined) cache.seed('k', 'st', 'nowPlaying', versioned(seed, [2, 1]), 0, refresh, readAt);
      };
      await cache.read('k', 'st', 'nowPlaying', 0, async () => versioned('first', [1, 7]), refresh);
      cache.peek('k', 0);
      cache.drop('st', 'nowPlaying', 'seeded'); // at once
      cache.drop('st', 'nowPlaying', 'seeded'); // from the bus
      expect(cache.peek('k', 0)?.bytes.toString(), 'still there while the computations run').to.equal('seeded');
      for (const finish of computations) finish();
      await new Promise((ok) => setImmediate(ok));
      expect(cache.peek('k', 0)?.bytes.toString()).to.equal('from the database');
      // Once a computation showed that version, the seed may not replace it (it may show less: art resolved since).
      expect(cache.seed('k', 'st', 'nowPlaying', versioned('seeded', [2, 1]), 0, refresh, 0)).to.equal(false);
    });

    it('orders versions element by element', () => {
      expect(laterVersion([2], [1, 9])).to.equal(true);
      expect(laterVersion([1, 9], [2])).to.equal(false);
      expect(laterVersion([1, 2], [1, 2])).to.equal(false);
      expect(laterVersion([1, 2], [1])).to.equal(true);
      expect(laterVersion([0], undefined)).to.equal(true);
    });
  });

  it('holds at most its budget: the oldest go first, an entry read since the last pass gets a second chance, a huge one is not kept', async () => {
    const budget = 16 * 1024;
    const cache = new ReadCache(budget, 60_000);
    const body = 'x'.repeat(1000);
    await cache.read('hot', 'st', 'content', 0, async () => rep(body));
    for (let i = 0; i < 40; i++) {
      await cache.read(`k${i}`, 'st', 'content', 0, async () => rep(body));
      expect(cache.peek('hot', 0), `the hot entry survives insert ${i}`).to.not.equal(undefined);
      expect(cache.usedBytes).to.be.at.most(budget);
    }
    expect(cache.peek('k0', 0), 'the oldest unread entry was evicted').to.equal(undefined);
    expect(cache.peek('k39', 0)).to.not.equal(undefined);
    await cache.read('huge', 'st', 'content', 0, async () => rep('y'.repeat(budget / 4)));
    expect(cache.peek('huge', 0)).to.equal(undefined);
  });

  it('past its safety age an answer is recomputed, before Koa as in the route (its asOf is lib/asOf.ts’s)', async () => {
    const cache = new ReadCache(1 << 20, 0); // every entry is past its safety age at once
    let computed = 0;
    const answer = async () => Representation.json({ n: ++computed }, 5000);
    await cache.read('k', 'st', 'schedule', 1000, answer);
    expect(cache.peek('k', 1000), 'peek (the path before Koa) does not serve it').to.equal(undefined);
    expect(JSON.parse((await cache.read('k', 'st', 'schedule', 2000, answer)).bytes.toString())).to.deep.equal({ n: 2 });
  });

  it('keeps nothing with a budget of 0', async () => {
    const cache = new ReadCache(0, 60_000);
    expect((await cache.read('k', 'st', 'content', 0, async () => rep('a'))).bytes.toString()).to.equal('a');
    expect(cache.size).to.equal(0);
  });
});
