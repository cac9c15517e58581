import type { Station, ModuleKey } from '../domains/stations/model.ts';
import type { Credential } from '../domains/auth/model.ts';
import type { WebServices } from '../services.ts';
import { ModuleDisabledError } from '../lib/errors.ts';
import { readKey, type ReadArea, type ReadAreas, type Representation } from '../lib/readCache.ts';

// What every GraphQL resolver is given, and the helpers they all share: written once here, so the root
// resolvers (resolvers.ts) and the read resolvers (reads.ts) both import it and not each other.

export type GraphQLContext = {
  svc: WebServices;
  station: Station;
  credential: Credential;
  /** The X-Preview-Grant header, for previewEditorial. */
  previewGrant?: string;
  /** Set by the HTTP layer from the result's coded errors. */
  status?: number;
  /** Seconds for `Retry-After`, set with a 503 from an error that says when to retry (Postgres unreachable). */
  retryAfter?: number;
  /**
   * What the response shows, while it can be kept whole (graphql/serve.ts): the read areas used and
   * the earliest instant one of their answers changes. Unset by any root field not served from the
   * cached reads, and by errors.
   */
  answer?: { areas: Set<ReadArea>; validUntil: number };
  /**
   * With read replicas: the replay position of the replica this operation reads (`svc.db` is then that
   * replica, graphql/serve.ts); undefined on the primary. The answers it computes are kept only while no
   * newer write of the station was heard (lib/readCache.ts).
   */
  readLsn?: bigint;
};

/** A field's arguments as GraphQL passes them: a query schema's `Static` type, each key absent or null. */
export type Args<T> = { [K in keyof T]?: T[K] | null };

/** A disabled module answers MODULE_DISABLED, as its REST route does. */
export function requireModule(ctx: GraphQLContext, module: ModuleKey): void {
  if (!ctx.station.modules[module]) throw new ModuleDisabledError(module);
}

/**
 * The same cached answer REST serves for this read (lib/readCache.ts: one key per operation, station
 * and query), so a GraphQL poll costs no query while the answer holds.
 */
export async function cached(
  ctx: GraphQLContext,
  operationId: string,
  area: ReadAreas,
  query: Record<string, string>,
  compute: () => Promise<Representation>,
  path = '',
): Promise<Representation> {
  const stationId = ctx.station.id;
  const key = readKey(operationId, stationId, path, new URLSearchParams(query).toString());
  const rep = await ctx.svc.reads.read(key, stationId, area, ctx.svc.clock.now().getTime(), (basis) => {
    basis.lsn = ctx.readLsn;
    return compute();
  });
  const answer = ctx.answer;
  if (answer) {
    for (const each of typeof area === 'string' ? [area] : area) answer.areas.add(each);
    if (rep.validUntil < answer.validUntil) answer.validUntil = rep.validUntil;
  }
  return rep;
}

const parsed = new WeakMap<Representation, unknown>();

/** The value an answer was serialised from, or its bytes parsed (once per answer). */
export function valueOf(rep: Representation): unknown {
  if (rep.value !== undefined) return rep.value;
  let value = parsed.get(rep);
  if (value === undefined) parsed.set(rep, (value = JSON.parse(rep.bytes.toString('utf8'))));
  return value;
}
