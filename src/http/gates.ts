import type { Context } from 'koa';
import { ForbiddenError, ModuleDisabledError, NotFoundError, UnauthenticatedError, ValidationError } from '../lib/errors.ts';
import { hashToken, isWellFormedToken, TOKEN_LENGTH } from '../lib/tokens.ts';
import {
  isPublic,
  type FrameworkServices as Services,
  type RouteCredential as Credential,
  type RouteModuleKey as ModuleKey,
  type RouteScope as Scope,
  type RouteStation as Station,
} from './subjects.ts';
import type { LimitName } from './ratelimit.ts';

// The gates, in the order docs/errors.md#gate-order fixes for listener routes: station → credential → rate limit →
// module. A gate is a plain check on the context (throwing to refuse); route.ts runs a route's gates in
// one middleware, so a listener read pays for one function call per gate, not a middleware hop.

export type Gate = (ctx: Context) => Promise<void> | void;

/**
 * Where a route names its station, which decides how a station it cannot serve is refused:
 * - `slug`: the `{stationSlug}` path parameter (listener reads, GraphQL, push) — 404 before the credential;
 * - `id`: the `{stationId}` path parameter (media bytes) — the same 404;
 * - `body`: `stationId` in the JSON body (the REST preview) — the same 404, after the body is validated;
 * - `query`: exactly one of `stationSlug`/`stationId` in the query, naming the credential's own station
 *   (ingest) — an unknown one answers 401 like a wrong credential, an inactive one 403 once the
 *   credential is proven, both after the query is validated.
 */
export type StationSource = 'slug' | 'id' | 'body' | 'query';

export function stationOf(ctx: Context): Station {
  const station = ctx.state.station as Station | undefined;
  if (!station) throw new Error('station gate did not run');
  return station;
}

export function credentialOf(ctx: Context): Credential {
  const credential = ctx.state.credential as Credential | undefined;
  if (!credential) throw new Error('credential gate did not run');
  return credential;
}

function admitStation(ctx: Context, found: Station | null): void {
  if (!found || !isPublic(found)) throw new NotFoundError('Station not found.');
  ctx.state.station = found;
}

// Gates answer synchronously when the caches hold what they need (the common case), so a listener
// read runs its gates without a microtask hop each; they return a promise only on a cache miss.

/** 404 NOT_FOUND for an unknown, inactive or public-offline station. */
export function stationGate(svc: Services): Gate {
  return function station(ctx: Context): Promise<void> | void {
    const slug = ctx.params.stationSlug as string | undefined;
    if (!slugShaped(slug)) throw new NotFoundError('Station not found.');
    const hit = svc.stations.peekBySlug(slug);
    if (hit !== undefined) return admitStation(ctx, hit);
    return svc.stations.bySlugOrNull(slug).then((found) => admitStation(ctx, found));
  };
}

/** For routes that name the station by id (media bytes; the REST preview's body): the same 404 as the slug gate. */
export function stationByIdGate(svc: Services, idOf: (ctx: Context) => unknown = (ctx) => ctx.params.stationId): Gate {
  return function stationById(ctx: Context): Promise<void> | void {
    const id = idOf(ctx);
    if (typeof id !== 'string' || id.length < 1 || id.length > 80) throw new NotFoundError('Station not found.');
    const hit = svc.stations.peekById(id);
    if (hit !== undefined) return admitStation(ctx, hit);
    return svc.stations.byIdOrNull(id).then((found) => admitStation(ctx, found));
  };
}

/**
 * The station an integration names in its (validated) query, exactly one of `stationSlug`/`stationId`:
 * 400 for both or neither; 401 UNAUTHENTICATED, like a wrong credential, for an unknown one. Inactive
 * stations pass here (the credential decides first); `activeStationGate` refuses them after it.
 */
export function credentialStationGate(svc: Services): Gate {
  return async function credentialStation(ctx: Context): Promise<void> {
    const query = ctx.state.query as { stationSlug?: string; stationId?: string };
    if ((query.stationSlug === undefined) === (query.stationId === undefined)) {
      throw new ValidationError('Invalid query parameters.', [
        { path: 'stationSlug', code: 'invalid_value', message: 'send exactly one of stationSlug or stationId' },
      ]);
    }
    const station =
      query.stationSlug !== undefined
        ? await svc.stations.bySlugOrNull(query.stationSlug)
        : await svc.stations.byIdOrNull(query.stationId as string);
    if (!station) throw new UnauthenticatedError();
    ctx.state.station = station;
  };
}

/** 403 FORBIDDEN for an inactive station (after the credential gate, on routes where the station is the credential's). */
export function activeStationGate(ctx: Context): void {
  if (!stationOf(ctx).active) throw new ForbiddenError('The station is inactive.');
}

/** The gates that find a route's station, named where `source` says. */
export function stationGates(svc: Services, source: StationSource): { before: Gate; afterCredential?: Gate } {
  switch (source) {
    case 'slug':
      return { before: stationGate(svc) };
    case 'id':
      return { before: stationByIdGate(svc) };
    case 'body':
      return { before: stationByIdGate(svc, (ctx) => (ctx.state.body as { stationId?: unknown } | undefined)?.stationId) };
    case 'query':
      return { before: credentialStationGate(svc), afterCredential: activeStationGate };
  }
}

const BEARER = /^Bearer ([^\s]+)$/;

/** The raw token from `Authorization: Bearer <token>`; anything else (including the raw token alone) is null. */
export function bearerToken(ctx: Context): string | null {
  return bearerOf(ctx.req.headers.authorization);
}

/** The raw token of an `Authorization` header value, as `bearerToken` reads it. */
export function bearerOf(header: string | undefined): string | null {
  if (header === undefined) return null;
  const match = BEARER.exec(header);
  return match ? match[1] : null;
}

/** Whether the credential gate admits `credential` for `scope` on the station at `nowMs` (cachedReads.ts asks too). */
export function admits(
  credential: Credential | null | undefined,
  scope: Scope,
  stationId: string,
  nowMs: number,
): credential is Credential {
  return (
    !!credential &&
    credential.stationId === stationId &&
    credential.revokedAt === null &&
    credential.expiresAt.getTime() > nowMs &&
    credential.scopes.includes(scope)
  );
}

/** Whether a `{stationSlug}` can name a station at all (3 to 63 characters); any other answers 404. */
export const slugShaped = (slug: string | undefined): slug is string => slug !== undefined && slug.length >= 3 && slug.length <= 63;

function admitCredential(svc: Services, credential: Credential | null, scope: Scope, stationId: string): Credential {
  const nowMs = svc.clock.nowMs();
  if (!admits(credential, scope, stationId, nowMs)) throw new UnauthenticatedError();
  svc.credentials.touch(credential, nowMs);
  return credential;
}

/**
 * 401 UNAUTHENTICATED, with one identical body, for a missing, malformed, unknown, expired, revoked,
 * wrong-scope or other-station credential. Session cookies are ignored.
 *
 * A token already in the cache (by its hash) is answered from memory. Any other token must pass its
 * checksum before the credential is looked up, so a mistyped or invented token never reaches the
 * database. Returns synchronously on a cache hit.
 */
export function authenticate(svc: Services, ctx: Context, scope: Scope, stationId: string): Credential | Promise<Credential> {
  const token = bearerToken(ctx);
  if (!token || token.length !== TOKEN_LENGTH) throw new UnauthenticatedError();
  const hash = hashToken(token);
  const hit = svc.credentials.peek(hash);
  if (hit !== undefined) return admitCredential(svc, hit, scope, stationId);
  if (!isWellFormedToken(token)) throw new UnauthenticatedError();
  return svc.credentials.byHash(hash).then((credential) => admitCredential(svc, credential, scope, stationId));
}

export function credentialGate(svc: Services, scope: Scope): Gate {
  return function credential(ctx: Context): Promise<void> | void {
    const result = authenticate(svc, ctx, scope, stationOf(ctx).id);
    if (result instanceof Promise) {
      return result.then((found) => {
        ctx.state.credential = found;
      });
    }
    ctx.state.credential = result;
  };
}

export function rateLimitGate(svc: Services, name: LimitName): Gate {
  // A limit set to 0 is off: the gate is then free.
  if (!svc.rateLimits.enabled(name)) return () => undefined;
  return function rateLimit(ctx: Context): Promise<void> {
    const credential = ctx.state.credential as Credential | undefined;
    return svc.rateLimits.take(ctx, name, credential ? credential.id : `ip:${ctx.ip}`);
  };
}

/** 404 MODULE_DISABLED when the station switched the module off. */
export function moduleGate(module: ModuleKey): Gate {
  return function moduleSwitch(ctx: Context): void {
    if (!stationOf(ctx).modules[module]) throw new ModuleDisabledError(module);
  };
}
