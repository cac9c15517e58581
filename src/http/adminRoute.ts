import type { Context, Middleware } from 'koa';
import type { AdminAccess } from '../lib/operatorScopes.ts';
import { authenticateAdmin, authorize } from './adminAccess.ts';
import { audited } from './audit.ts';
import type { RouteSpec } from './routeSpec.ts';
import type { RouteServices as Services } from './subjects.ts';

const WRITES = new Set(['post', 'put', 'patch', 'delete']);

/**
 * What is wrong with an admin route's declared access, in words that say what to add; null when
 * nothing. Mounting refuses such a route, and test/http/adminAccess.test.ts walks the table with it.
 */
export function adminAccessProblem(route: RouteSpec): string | null {
  if (route.surface !== 'admin') return null;
  const where = `admin route ${route.method.toUpperCase()} ${route.path} (${route.operationId})`;
  const example = WRITES.has(route.method) ? `{ scope: 'content:write', action: 'content.publish' }` : `{ scope: 'content:write' }`;
  if (!route.access) {
    return `${where} declares no access: add \`access: ${example}\` beside its path — the operator-key scope it needs (one of src/lib/operatorScopes.ts OPERATOR_SCOPES, a GET needing its area's scope) or 'root' for the root key alone${WRITES.has(route.method) ? ', and the audit action (<area>.<verb>) its entries carry' : ''}`;
  }
  if (WRITES.has(route.method) && !route.access.action) {
    return `${where} is a write without an audit action: add \`action: '<area>.<verb>'\` to its access, e.g. ${example}`;
  }
  return null;
}

/** The status a write answers when it succeeds: the first 2xx it documents. */
const successStatus = (route: RouteSpec): number => Number(Object.keys(route.responses).find((status) => status.startsWith('2')) ?? 200);

/**
 * An admin route: the root key or an operator key (adminAccess.ts) before anything else, then — for a
 * write inside its audit entry (audit.ts) — the station and scope of the key, validation and handler.
 */
export function adminRoute(route: RouteSpec, svc: Services, run: (ctx: Context) => Promise<void> | void): Middleware {
  const problem = adminAccessProblem(route);
  if (problem) throw new Error(problem);
  const access = route.access as AdminAccess;
  if (!WRITES.has(route.method)) {
    return async (ctx) => {
      authorize(await authenticateAdmin(svc, ctx), access, ctx);
      await run(ctx);
    };
  }
  const status = successStatus(route);
  return async (ctx) => {
    const principal = await authenticateAdmin(svc, ctx);
    await audited(svc, ctx, principal, access.action as string, status, () => {
      authorize(principal, access, ctx);
      return run(ctx);
    });
  };
}
