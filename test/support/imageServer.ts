import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { crc32, deflateSync } from 'node:zlib';
import sharp, { type Sharp } from 'sharp';

// A local image host for artwork checks: real HTTP, real images made with sharp, and the hostile
// ones (a host that hangs, redirects forever, sends 2 GB lazily, a decompression bomb).

/** A picture with structure (8 × 8 random grey blocks scaled up), so perceptual hashes tell pictures apart. */
export async function pattern(seed: number, width: number, height: number): Promise<Sharp> {
  let state = seed * 9301 + 49297;
  const random = () => ((state = (state * 9301 + 49297) % 233280) / 233280) * 255;
  const blocks = Buffer.alloc(8 * 8 * 3);
  for (let i = 0; i < 64; i++) blocks.fill(Math.round(random()), i * 3, i * 3 + 3);
  return sharp(
    await sharp(blocks, { raw: { width: 8, height: 8, channels: 3 } })
      .resize(width, height, { kernel: 'nearest' })
      .png()
      .toBuffer(),
  );
}

export const png = async (seed: number, width: number, height: number) => (await pattern(seed, width, height)).png().toBuffer();
export const jpeg = async (seed: number, width: number, height: number, quality = 80) =>
  (await pattern(seed, width, height)).jpeg({ quality }).toBuffer();

function chunk(type: string, data: Buffer): Buffer {
  const length = Buffer.alloc(4);
  length.writeUInt32BE(data.length);
  const body = Buffer.concat([Buffer.from(type, 'ascii'), data]);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(body));
  return Buffer.concat([length, body, crc]);
}

/** A tiny PNG whose header declares width × height (a decompression bomb). */
export function bombPng(width = 50_000, height = 50_000): Buffer {
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(height, 4);
  ihdr.set([8, 0, 0, 0, 0], 8);
  // A few rows of zeros; a decoder that believed the header would allocate 2.5 gigapixels.
  const idat = deflateSync(Buffer.alloc(width + 1));
  return Buffer.concat([
    Buffer.from([137, 80, 78, 71, 13, 10, 26, 10]),
    chunk('IHDR', ihdr),
    chunk('IDAT', idat),
    chunk('IEND', Buffer.alloc(0)),
  ]);
}

export class ImageServer {
  private server: Server | null = null;
  readonly files = new Map<string, { type: string; bytes: Buffer }>();
  readonly hits = new Map<string, number>();
  /** Bytes the /huge route managed to write before the client went away. */
  hugeBytesSent = 0;
  private readonly hanging = new Set<ServerResponse>();
  url = '';

  async start(): Promise<void> {
    this.server = createServer((req, res) => {
      const path = (req.url ?? '/').split('?')[0];
      this.hits.set(path, (this.hits.get(path) ?? 0) + 1);
      const file = this.files.get(path);
      if (file) {
        res.writeHead(200, { 'content-type': file.type, 'content-length': file.bytes.length });
        res.end(file.bytes);
        return;
      }
      if (path.startsWith('/hang')) {
        this.hanging.add(res);
        res.on('close', () => this.hanging.delete(res));
        return;
      }
      const redirect = /^\/loop\/(\d+)$/.exec(path);
      if (redirect) {
        res.writeHead(302, { location: `/loop/${Number(redirect[1]) + 1}` });
        res.end();
        return;
      }
      if (path.startsWith('/huge')) {
        // 2 GB, written only as fast as the client reads, and no Content-Length to refuse it early.
        const total = 2 * 1024 ** 3;
        const piece = Buffer.alloc(64 * 1024, 0xff);
        res.writeHead(200, { 'content-type': 'image/png' });
        const pump = () => {
          while (this.hugeBytesSent < total) {
            this.hugeBytesSent += piece.length;
            if (!res.write(piece)) return void res.once('drain', pump);
          }
          res.end();
        };
        res.on('close', () => res.removeAllListeners('drain'));
        pump();
        return;
      }
      res.writeHead(404);
      res.end();
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server!.address() as AddressInfo).port}`;
  }

  serve(path: string, bytes: Buffer, type = 'image/png'): string {
    this.files.set(path, { type, bytes });
    return this.url + path;
  }

  async stop(): Promise<void> {
    for (const res of this.hanging) res.destroy();
    this.server?.closeAllConnections();
    await new Promise<void>((resolve) => this.server?.close(() => resolve()));
  }
}
