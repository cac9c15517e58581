import type { Context, Middleware, Next } from 'koa';

/**
 * A precompiled route table for the listener reads, the hottest paths of the service.
 *
 * @koa/router (which serves the admin and other routes) tests every route's regular expression,
 * reads `ctx.host`, logs through `debug` and composes a new middleware chain on every request; for a
 * listener read that was more work than the rest of the request together. Here each route's path is
 * split into segments once, routes are bucketed by method and segment count, and a request is
 * matched by comparing literal segments — with the same results as @koa/router for these paths:
 * a GET route answers HEAD too, one trailing slash is ignored, an empty segment matches nothing,
 * parameters are percent-decoded (left as sent when the escape is malformed), and a request that
 * matches nothing goes on to the next middleware (which answers 404).
 */
export class RouteTable<H = Middleware> {
  /** method → segment count → routes */
  private readonly buckets = new Map<string, Map<number, CompiledRoute<H>[]>>();

  /** `path` in OpenAPI form (`/api/v1/stations/{stationSlug}/content/{id}`). */
  add(method: string, path: string, handler: H): void {
    const segments = path.split('/').slice(1);
    const compiled: CompiledRoute<H> = {
      literals: segments.map((segment) => (segment.startsWith('{') ? null : segment)),
      names: segments.map((segment) => (segment.startsWith('{') ? segment.slice(1, -1) : null)),
      handler,
    };
    for (const verb of method.toUpperCase() === 'GET' ? ['GET', 'HEAD'] : [method.toUpperCase()]) {
      let bySize = this.buckets.get(verb);
      if (!bySize) this.buckets.set(verb, (bySize = new Map()));
      const list = bySize.get(segments.length) ?? [];
      // Routes with more literal segments first, so `/schedule.ics`-style literals win over parameters.
      list.push(compiled);
      list.sort((a, b) => countLiterals(b) - countLiterals(a));
      bySize.set(segments.length, list);
    }
  }

  /** The route `method` and `path` (without the query string) reach, with its decoded parameters. */
  match(method: string, path: string): { handler: H; params: Record<string, string> } | null {
    const bySize = this.buckets.get(method);
    if (!bySize) return null;
    if (path.length > 1 && path.endsWith('/')) path = path.slice(0, -1);
    const segments = path.split('/');
    const candidates = bySize.get(segments.length - 1);
    if (!candidates) return null;
    for (const route of candidates) {
      const params = matchSegments(route, segments);
      if (params) return { handler: route.handler, params };
    }
    return null;
  }

  middleware(this: RouteTable<Middleware>): Middleware {
    return (ctx: Context, next: Next) => {
      const found = this.match(ctx.method, ctx.path);
      if (!found) return next();
      (ctx as { params?: Record<string, string> }).params = found.params;
      return found.handler(ctx, next);
    };
  }
}

interface CompiledRoute<H> {
  literals: Array<string | null>;
  names: Array<string | null>;
  handler: H;
}

function countLiterals(route: CompiledRoute<unknown>): number {
  return route.literals.filter((literal) => literal !== null).length;
}

function matchSegments(route: CompiledRoute<unknown>, segments: string[]): Record<string, string> | null {
  const { literals, names } = route;
  const params: Record<string, string> = {};
  for (let i = 0; i < literals.length; i++) {
    const segment = segments[i + 1];
    const literal = literals[i];
    if (literal !== null) {
      if (segment !== literal) return null;
    } else {
      if (segment.length === 0) return null;
      params[names[i] as string] = decodeSegment(segment);
    }
  }
  return params;
}

function decodeSegment(segment: string): string {
  if (!segment.includes('%')) return segment;
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}
