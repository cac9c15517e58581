import { connect, type Socket } from 'node:net';
import type { ClientEvents } from './client.ts';

// A minimal SSE client for the bench fleet: a TCP socket, one GET, and a reader of the chunked response
// (the `eventsource` package would make the fleet, not the server, the thing being measured). The gateway
// writes one HTTP chunk per stream and turn, holding one message or several; comments (`: ping`) and the
// `retry:` line are not messages.

export class BenchSseClient {
  private readonly socket: Socket;
  private pending: Buffer | null = null;
  private headed = false;
  private readonly events: ClientEvents;

  constructor(url: URL, events: ClientEvents, headers = '') {
    this.events = events;
    this.socket = connect(Number(url.port), url.hostname);
    this.socket.setNoDelay(true);
    this.socket.on('connect', () => {
      this.socket.write(`GET ${url.pathname}${url.search} HTTP/1.1\r\nHost: ${url.host}\r\nAccept: text/event-stream\r\n${headers}\r\n`);
    });
    this.socket.on('data', (chunk: Buffer) => this.read(chunk));
    this.socket.on('close', () => events.onClose());
    this.socket.on('error', () => {});
  }

  terminate(): void {
    this.socket.destroy();
  }

  /** Drops the connection as a lost network does (RST: no TIME_WAIT left on the fleet's ports). */
  reset(): void {
    this.socket.resetAndDestroy();
  }

  private read(chunk: Buffer): void {
    let data = this.pending ? Buffer.concat([this.pending, chunk]) : chunk;
    this.pending = null;
    if (!this.headed) {
      const end = data.indexOf('\r\n\r\n');
      if (end < 0) {
        this.pending = data;
        return;
      }
      if (!data.subarray(0, 12).toString('latin1').includes(' 200')) {
        this.socket.destroy();
        return;
      }
      this.headed = true;
      this.events.onOpen();
      data = data.subarray(end + 4);
    }
    // uWS writes each chunk as `\r\n<hex>\r\n<data>`: the CRLF that ends a chunk comes with the next one.
    let offset = 0;
    while (offset < data.length) {
      let start = offset;
      if (data[start] === 0x0d && data[start + 1] === 0x0a) start += 2;
      const lineEnd = data.indexOf('\r\n', start);
      if (lineEnd < 0) break;
      const size = parseInt(data.subarray(start, lineEnd).toString('latin1'), 16);
      if (Number.isNaN(size) || data.length < lineEnd + 2 + size) break;
      const body = data.subarray(lineEnd + 2, lineEnd + 2 + size);
      offset = lineEnd + 2 + size;
      if (size === 0) {
        this.socket.end();
        break;
      }
      // One chunk may hold several messages (the gateway writes a turn's messages at once).
      let from = 0;
      while (from < body.length) {
        const end = body.indexOf('\n\n', from);
        const message = body.subarray(from, end < 0 ? body.length : end);
        from = end < 0 ? body.length : end + 2;
        if (message[0] === 0x69 /* i */ || message[0] === 0x64 /* d */) this.events.onFrame(message);
      }
    }
    if (offset < data.length) this.pending = Buffer.from(data.subarray(offset));
  }
}
