import type { Context } from 'koa';
import { ForbiddenError, NotFoundError, UnauthenticatedError } from '../lib/errors.ts';
import type { AdminAccess } from '../lib/operatorScopes.ts';
import { hashToken, isOperatorKeyShaped, safeEqual } from '../lib/tokens.ts';
import { bearerToken } from './gates.ts';
import type { FrameworkServices as Services, RouteOperatorKey as OperatorKey } from './subjects.ts';

// Who may call an admin route (docs/operations.md#operator-keys-and-the-audit-log): the root key
// (WAVELINE_ADMIN_TOKEN, everything) or an operator key (`wvo_…`), limited to its stations and scopes.
// Only admin routes (route.ts, surface `admin`) run this; listener routes never reach it.

/** Who made an admin request: the root key (`key` null, id "root") or an operator key. */
export interface AdminPrincipal {
  keyId: string;
  keyLabel: string;
  key: OperatorKey | null;
}

const ROOT: AdminPrincipal = { keyId: 'root', keyLabel: 'root', key: null };

/** 401 for a missing, unknown, expired or revoked key (and a listener credential): one body for all. */
function refuse(): never {
  throw new UnauthenticatedError('A valid operator key is needed.');
}

async function authenticate(svc: Services, ctx: Context): Promise<AdminPrincipal> {
  const token = bearerToken(ctx);
  if (!token) refuse();
  const root = svc.config.adminToken;
  // Compared in constant time, whatever the token looks like.
  if (root && safeEqual(token, root)) return ROOT;
  if (!isOperatorKeyShaped(token)) refuse();
  const key = await svc.operatorKeys.byHash(hashToken(token));
  const nowMs = svc.clock.nowMs();
  if (!key || key.revokedAt !== null || key.expiresAt.getTime() <= nowMs) refuse();
  svc.operatorKeys.touch(key, nowMs);
  return { keyId: key.id, keyLabel: key.label, key };
}

/**
 * Authenticates an admin request. With the failure limit on, ten failed authentications a minute from
 * one client address (ctx.ip: the trusted-proxy rule of every per-IP limit) empty the address' bucket:
 * further requests from it answer 429 RATE_LIMITED with Retry-After until a token is back.
 */
export async function authenticateAdmin(svc: Services, ctx: Context): Promise<AdminPrincipal> {
  if (!svc.rateLimits.enabled('adminFailures')) return authenticate(svc, ctx);
  const bucket = `ip:${ctx.ip}`;
  await svc.rateLimits.refuseWhenEmpty(ctx, 'adminFailures', bucket);
  try {
    return await authenticate(svc, ctx);
  } catch (err) {
    if (err instanceof UnauthenticatedError) await svc.rateLimits.take(ctx, 'adminFailures', bucket);
    throw err;
  }
}

/**
 * Whether the principal may make this call: a station outside an operator key's list answers 404 as an
 * unknown station would (a key learns nothing of other stations); a missing scope 403 naming it.
 */
export function authorize(principal: AdminPrincipal, access: AdminAccess, ctx: Context): void {
  const key = principal.key;
  if (!key) return;
  const stationId = ctx.params?.stationId as string | undefined;
  if (stationId !== undefined && key.stations !== '*' && !key.stations.includes(stationId)) throw new NotFoundError('Station not found.');
  if (access.scope === 'root') {
    throw new ForbiddenError('This needs the root key (WAVELINE_ADMIN_TOKEN); operator keys cannot make this call.');
  }
  if (!(key.scopes as readonly string[]).includes(access.scope)) {
    throw new ForbiddenError(`This needs an operator key with the scope ${access.scope}.`, [
      { path: 'scopes', code: 'missing_scope', message: `the key lacks the scope ${access.scope}`, suggestion: access.scope },
    ]);
  }
}
