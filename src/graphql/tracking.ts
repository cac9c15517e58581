import type { GraphQLContext } from './context.ts';

/**
 * Root fields whose answers come only from the cached listener reads (graphql/reads.ts, resolvers.ts)
 * or the station itself. A document that asks for nothing else gets its whole response kept
 * (graphql/serve.ts): `cached()` (context.ts) adds each read's areas to the context's `answer`; any
 * other root field (the editorial preview mutation, which reads drafts) unsets it, so the response is
 * not kept.
 */
const CACHED_FIELDS = new Set([
  'station',
  'schemas',
  'content',
  'contentRecord',
  'contentBySlug',
  'schedule',
  'programs',
  'currentBroadcast',
  'nowPlaying',
  'live',
  'trackHistory',
  'weather',
  'traffic',
]);

/** The root resolvers, each one not served from the cached reads wrapped to mark the response as not kept. */
export function trackedRoot(root: Record<string, unknown>): Record<string, unknown> {
  const tracked: Record<string, unknown> = {};
  for (const [name, field] of Object.entries(root)) {
    tracked[name] =
      typeof field !== 'function' || CACHED_FIELDS.has(name)
        ? field
        : (args: unknown, ctx: GraphQLContext, info: unknown) => {
            ctx.answer = undefined;
            return (field as (a: unknown, c: GraphQLContext, i: unknown) => unknown)(args, ctx, info);
          };
  }
  return tracked;
}
