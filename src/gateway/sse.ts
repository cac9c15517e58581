import type * as uWS from 'uWebSockets.js';
import type { FeedErrorCode } from './frames.ts';
import { sseMessage, type StreamOut } from './fanout.ts';

// The Server-Sent Events transport (docs/realtime.md#connect): the
// same messages as the WebSocket, framed as `id:` / `data:` lines on a long HTTP response.

/** HTTP status of each refusal: the SSE answer carries the error message as a JSON body, no stream. */
export const REFUSAL_STATUS: Record<FeedErrorCode, string> = {
  VALIDATION_ERROR: '400 Bad Request',
  NOT_FOUND: '404 Not Found',
  MODULE_DISABLED: '404 Not Found',
  RATE_LIMITED: '429 Too Many Requests',
  PROVIDER_UNAVAILABLE: '503 Service Unavailable',
};

/** The stream's first bytes: browsers wait 3 s before reconnecting (with Last-Event-ID). */
export const SSE_PREAMBLE = Buffer.from('retry: 3000\n\n');
/** The heartbeat comment: keeps proxies and the gateway's own HTTP idle timeout (10 s) from closing the stream. */
export const SSE_PING = Buffer.from(': ping\n\n');
/** Heartbeat period; below uWS's 10 s HTTP idle timeout and the 15 s of docs/realtime.md#details-and-choices. */
export const SSE_PING_MS = 8000;

/**
 * One open SSE response. Writes that the socket cannot take at once are buffered by uWS; the bytes written
 * while it is backed up are counted, and a stream with more than `maxBackpressure` waiting is closed (a
 * slow client never holds the others back, as on the WebSocket).
 */
// The stream and bytes of the write in progress: `res.cork` then takes one function for every write,
// not a new closure each time (the fan-out writes to thousands of streams per change).
let writing: SseStream | null = null;
let writingBytes: Buffer = Buffer.alloc(0);
const writeCorked = (): void => writing?.writeNow(writingBytes);

export class SseStream implements StreamOut {
  readonly res: uWS.HttpResponse;
  closed = false;
  joinedAt = 0;
  private backlog = 0;
  private blocked = false;
  private readonly maxBackpressure: number;
  private readonly onSlow: () => void;
  private readonly counted: (bytes: Buffer) => void;

  constructor(res: uWS.HttpResponse, maxBackpressure: number, onSlow: () => void, counted: (bytes: Buffer) => void) {
    this.res = res;
    this.maxBackpressure = maxBackpressure;
    this.onSlow = onSlow;
    this.counted = counted;
  }

  /** Writes a message framed for SSE (called inside a cork). */
  send(frame: Buffer | string, cursor: string | null): boolean {
    const message = sseMessage(frame, cursor);
    this.writeNow(message);
    if (!this.closed) this.counted(message);
    return !this.closed;
  }

  /** Writes bytes from outside a uWS callback (fan-out, heartbeat). */
  write(bytes: Buffer): void {
    if (this.closed) return;
    writing = this;
    writingBytes = bytes;
    this.res.cork(writeCorked);
    writing = null;
  }

  /** Writes bytes inside a cork. */
  writeNow(bytes: Buffer): void {
    if (this.closed) return;
    if (this.blocked) {
      this.backlog += bytes.length;
      if (this.backlog > this.maxBackpressure) {
        this.closed = true;
        this.onSlow();
        this.res.close(); // onAborted cleans up
        return;
      }
    }
    if (!this.res.write(bytes) && !this.blocked) {
      this.blocked = true;
      this.res.onWritable(() => {
        this.blocked = false;
        this.backlog = 0;
        return true;
      });
    }
  }

  /** Ends the response (drain, refusal after an admin change, module change): the client reconnects. */
  end(): void {
    if (this.closed) return;
    this.closed = true;
    this.res.cork(() => this.res.end());
  }
}
