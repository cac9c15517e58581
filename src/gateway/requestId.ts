import type * as uWS from 'uWebSockets.js';
import { requestIdFrom } from '../lib/ids.ts';

/** Every HTTP answer of the gateway carries `X-Request-Id` (docs/errors.md#error-codes: every response), like web's. */
export function requestIdOf(req: uWS.HttpRequest): string {
  return requestIdFrom(req.getHeader('x-request-id') || undefined);
}
