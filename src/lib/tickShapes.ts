import { executionAsyncResource } from 'node:async_hooks';

// Node's `process.nextTick` queues each tick as an object literal whose first keys are computed symbols
// (Node 22: `{ [async_id_symbol]: …, [trigger_async_id_symbol]: …, [async_context_frame]: …, callback,
// args }`). Such a literal has no boilerplate that holds its shapes: V8 builds the hidden classes (maps)
// of its steps as transitions at run time, and they live only as long as some tick object does. Ticks
// last a few microseconds, so a full (mark-compact) collection finds none alive, frees those maps, and
// the next tick builds new ones. After a few such collections the inline cache of the literal in
// `nextTick` has seen too many maps, and the optimized code of every caller it is inlined into (the
// socket write's completion, the response's finish, the request's end: several per HTTP request)
// stores the computed keys through a runtime call instead of inline — about 2 µs more per cached read, a
// tenth of its cost (docs/benchmarks.md#the-tick-object-shapes).
//
// A web process collects its old generation often enough for that (the embedded database and the
// worker of `waveline dev` more often still), while a tiny bare server never does, which is why the
// extra cost came and went between runs. Keeping one tick object alive for the life of the process
// keeps its map, and through each map's back pointer the ones before it, so the shapes never change
// and the inline cache stays monomorphic. It costs one small object.

let kept: object | null = null;

/** Keeps one `process.nextTick` tick object alive for the process's life (once; later calls do nothing). */
export function keepTickShapes(): void {
  if (kept !== null) return;
  kept = {}; // until the tick below runs: a second call queues nothing
  // Inside a tick's callback the execution resource is that tick object (processTicksAndRejections).
  process.nextTick(() => {
    kept = executionAsyncResource();
  });
}

/** The tick object kept (tests). */
export const keptTick = (): object | null => kept;
