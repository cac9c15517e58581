import { hash, randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { CORS_EXPOSE_HEADERS } from '../../src/http/envelope.ts';

/**
 * Bare's answer: the fixed bytes with their ETag (304 when If-None-Match matches), the least work any
 * node:http server can do for it. Served by bareServer.ts in a process of its own and by
 * inProcessBare.ts from inside a measured Waveline process.
 */
export function bareAnswer(req: IncomingMessage, res: ServerResponse, body: Buffer, etag: string): void {
  if (req.headers['if-none-match'] === etag) {
    res.writeHead(304, { ETag: etag, 'Cache-Control': 'no-store' });
    res.end();
    return;
  }
  res.writeHead(200, {
    'Content-Type': 'application/json; charset=utf-8',
    'Content-Length': body.length,
    ETag: etag,
    'Cache-Control': 'no-store',
  });
  res.end(body);
}

const idPrefix = randomUUID().slice(0, 24);
let ids = 0;

/**
 * The contract's floor: bare's answer plus only what every listener read must carry
 * (docs/api-reference.md#conventions-of-every-listener-read) — the credential (`Authorization: Bearer`,
 * looked up by its SHA-256 as stored credentials are, when `tokenHash` is given), an `x-request-id`,
 * `Access-Control-Allow-Origin: *` with the exposed headers a browser app needs to read the ETag and the
 * request id — written the least costly way (a counter id, one `writeHead`). No gate order, station, module,
 * cache or metric: what no conforming server can skip.
 */
export function contractAnswer(req: IncomingMessage, res: ServerResponse, body: Buffer, etag: string, tokenHash: string | null): void {
  if (tokenHash !== null) {
    const authorization = req.headers.authorization;
    if (
      authorization === undefined ||
      !authorization.startsWith('Bearer ') ||
      hash('sha256', authorization.slice(7), 'hex') !== tokenHash
    ) {
      res.writeHead(401).end();
      return;
    }
  }
  const requestId = idPrefix + (ids++).toString(16).padStart(12, '0');
  if (req.headers['if-none-match'] === etag) {
    res.writeHead(304, {
      'X-Request-Id': requestId,
      'Access-Control-Allow-Origin': '*',
      'Access-Control-Expose-Headers': CORS_EXPOSE_HEADERS,
      'Cache-Control': 'no-store',
      ETag: etag,
    });
    res.end();
    return;
  }
  res.writeHead(200, {
    'X-Request-Id': requestId,
    'Access-Control-Allow-Origin': '*',
    'Access-Control-Expose-Headers': CORS_EXPOSE_HEADERS,
    'Cache-Control': 'no-store',
    ETag: etag,
    'Content-Type': 'application/json; charset=utf-8',
    'Content-Length': body.length,
  });
  res.end(body);
}
