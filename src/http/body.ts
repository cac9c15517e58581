import type { IncomingMessage } from 'node:http';
import { PayloadTooLargeError } from '../lib/errors.ts';

/**
 * Reads a request body as UTF-8 text, refusing it (413) as soon as more than `limit` bytes arrive,
 * before buffering the rest. A Content-Length over the limit is refused without reading at all.
 */
export async function readBodyText(req: IncomingMessage, limit: number): Promise<string> {
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > limit) {
    req.resume();
    throw new PayloadTooLargeError(`Request body is larger than ${limit} bytes.`);
  }
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > limit) {
      req.resume();
      throw new PayloadTooLargeError(`Request body is larger than ${limit} bytes.`);
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}
