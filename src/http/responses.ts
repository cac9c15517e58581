import { ErrorBody } from './schema.ts';
import type { ResponseSpec } from './routeSpec.ts';

// The documented error answers shared by route families, so every route states them the same way.
// Each takes the route's own wording of what its 404 means.

export function listenerErrorResponses(
  notFound = 'Station unknown, inactive or offline; module switched off (MODULE_DISABLED).',
): Record<string, ResponseSpec> {
  return {
    304: { description: 'Not modified (If-None-Match matched the current ETag).' },
    400: { description: 'Invalid parameters (VALIDATION_ERROR with issues).', schema: ErrorBody },
    401: { description: 'Missing or invalid credential.', schema: ErrorBody },
    404: { description: notFound, schema: ErrorBody },
    429: { description: 'Rate limited.', schema: ErrorBody },
  };
}

export function adminErrorResponses(
  notFound = 'Station not found.',
  extra: Record<string, ResponseSpec> = {},
): Record<string, ResponseSpec> {
  return {
    400: { description: 'Invalid input (VALIDATION_ERROR with issues).', schema: ErrorBody },
    401: { description: 'Missing or invalid operator token.', schema: ErrorBody },
    404: { description: notFound, schema: ErrorBody },
    ...extra,
  };
}

/** The common part of a listener read: tag, surface, the station (by slug), credential scope and rate limit. */
export const listenerRead = {
  tags: ['listener'],
  surface: 'listener' as const,
  station: 'slug' as const,
  scope: 'listener:read' as const,
  rateLimit: 'listener' as const,
};

/** The common part of an admin route: tag and surface (the operator token). */
export const adminWrite = { tags: ['admin'], surface: 'admin' as const };
