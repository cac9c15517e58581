import type { Context } from 'koa';
import { ModuleDisabledError, NotFoundError, UnauthenticatedError } from '../lib/errors.ts';
import { hashToken, isWellFormedToken, safeEqual, TOKEN_LENGTH } from '../lib/tokens.ts';
import { isPublic, type RouteCredential as Credential, type RouteModuleKey as ModuleKey, type RouteScope as Scope, type RouteStation as Station } from './subjects.ts';
import type { Services } from '../services.ts';
import type { LimitName } from './ratelimit.ts';

// The listener gates, in the order decisions.md fixes: station → credential → rate limit → module.
// A gate is a plain check on the context (throwing to refuse); route.ts runs a route's gates in one
// middleware, so a listener read pays for one function call per gate, not a middleware hop.

export type Gate = (ctx: Context) => Promise<void> | void;

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
    if (slug === undefined || slug.length < 3 || slug.length > 63) throw new NotFoundError('Station not found.');
    const hit = svc.stations.peekBySlug(slug);
    if (hit !== undefined) return admitStation(ctx, hit);
    return svc.stations.bySlugOrNull(slug).then((found) => admitStation(ctx, found));
  };
}

/** For routes that name the station by id (media bytes): the same 404 as the slug gate. */
export function stationByIdGate(svc: Services): Gate {
  return function stationById(ctx: Context): Promise<void> | void {
    const id = ctx.params.stationId as string | undefined;
    if (id === undefined || id.length < 1 || id.length > 80) throw new NotFoundError('Station not found.');
    const hit = svc.stations.peekById(id);
    if (hit !== undefined) return admitStation(ctx, hit);
    return svc.stations.byIdOrNull(id).then((found) => admitStation(ctx, found));
  };
}

const BEARER = /^Bearer ([^\s]+)$/;

/** The raw token from `Authorization: Bearer <token>`; anything else (including the raw token alone) is null. */
export function bearerToken(ctx: Context): string | null {
  const header = ctx.req.headers.authorization;
  if (header === undefined) return null;
  const match = BEARER.exec(header);
  return match ? match[1] : null;
}

function admitCredential(svc: Services, credential: Credential | null, scope: Scope, stationId: string): Credential {
  const now = svc.clock.now();
  if (
    !credential ||
    credential.stationId !== stationId ||
    credential.revokedAt !== null ||
    credential.expiresAt.getTime() <= now.getTime() ||
    !credential.scopes.includes(scope)
  ) {
    throw new UnauthenticatedError();
  }
  svc.credentials.touch(credential, now);
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

/** Operator auth for /admin/v1: constant-time comparison with WAVELINE_ADMIN_TOKEN. */
export function adminGate(svc: Services): Gate {
  return function admin(ctx: Context): void {
    const token = bearerToken(ctx);
    const expected = svc.config.adminToken;
    if (!expected || !token || !safeEqual(token, expected)) {
      throw new UnauthenticatedError('A valid operator token is needed.');
    }
  };
}
