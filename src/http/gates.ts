import type { Context } from 'koa';
import { ModuleDisabledError, NotFoundError, UnauthenticatedError } from '../lib/errors.ts';
import { hashToken, isWellFormedToken, safeEqual } from '../lib/tokens.ts';
import { isPublic, type ModuleKey, type Station } from '../domains/stations/model.ts';
import type { Credential, Scope } from '../domains/auth/model.ts';
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

/** 404 NOT_FOUND for an unknown, inactive or public-offline station. */
export function stationGate(svc: Services): Gate {
  return async function station(ctx: Context): Promise<void> {
    const slug = String(ctx.params.stationSlug ?? '');
    const found = slug.length >= 3 && slug.length <= 63 ? await svc.stations.bySlugOrNull(slug) : null;
    if (!found || !isPublic(found)) throw new NotFoundError('Station not found.');
    ctx.state.station = found;
  };
}

/** For routes that name the station by id (media bytes): the same 404 as the slug gate. */
export function stationByIdGate(svc: Services): Gate {
  return async function stationById(ctx: Context): Promise<void> {
    const id = String(ctx.params.stationId ?? '');
    const found = id.length >= 1 && id.length <= 80 ? await svc.stations.byIdOrNull(id) : null;
    if (!found || !isPublic(found)) throw new NotFoundError('Station not found.');
    ctx.state.station = found;
  };
}

/** The raw token from `Authorization: Bearer <token>`; anything else (including the raw token alone) is null. */
export function bearerToken(ctx: Context): string | null {
  const header = ctx.get('authorization');
  const match = /^Bearer ([^\s]+)$/.exec(header);
  return match ? match[1] : null;
}

/**
 * 401 UNAUTHENTICATED, with one identical body, for a missing, malformed, unknown, expired, revoked,
 * wrong-scope or other-station credential. A token failing its checksum never reaches the database.
 * Session cookies are ignored.
 */
export async function authenticate(svc: Services, ctx: Context, scope: Scope, stationId: string): Promise<Credential> {
  const token = bearerToken(ctx);
  if (!token || !isWellFormedToken(token)) throw new UnauthenticatedError();
  const credential = await svc.credentials.byHash(hashToken(token));
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

export function credentialGate(svc: Services, scope: Scope): Gate {
  return async function credential(ctx: Context): Promise<void> {
    ctx.state.credential = await authenticate(svc, ctx, scope, stationOf(ctx).id);
  };
}

export function rateLimitGate(svc: Services, name: LimitName): Gate {
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
