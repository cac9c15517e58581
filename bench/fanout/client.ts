import { connect, type Socket } from 'node:net';

// A minimal WebSocket client for the bench fleet: a TCP socket, the RFC 6455 handshake, and a frame
// reader that only finds frame boundaries. The `ws` package costs ~20 µs of CPU per frame, which on a
// small machine would make the fleet, not the server, the thing being measured.

const OP_TEXT = 0x1;
const OP_CLOSE = 0x8;
const OP_PING = 0x9;

export interface ClientEvents {
  onOpen(): void;
  onFrame(payload: Buffer): void;
  onClose(): void;
}

/**
 * What both bench clients share: one TCP socket, one GET, the response head (`status` expected, else the
 * socket is dropped), then the body handed to `consume`, which returns how many bytes it used (the rest
 * waits for the next chunk).
 */
export abstract class BenchStreamClient {
  protected readonly socket: Socket;
  protected readonly events: ClientEvents;
  private pending: Buffer | null = null;
  private opened = false;
  private readonly status: string;

  constructor(url: URL, events: ClientEvents, headers: string, status: string) {
    this.events = events;
    this.status = status;
    this.socket = connect(Number(url.port), url.hostname);
    this.socket.setNoDelay(true);
    this.socket.on('connect', () => {
      this.socket.write(`GET ${url.pathname}${url.search} HTTP/1.1\r\nHost: ${url.host}\r\n${headers}\r\n`);
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

  /** Reads what `data` holds of the body; returns the bytes used. */
  protected abstract consume(data: Buffer): number;

  private read(chunk: Buffer): void {
    let data = this.pending ? Buffer.concat([this.pending, chunk]) : chunk;
    this.pending = null;
    if (!this.opened) {
      const end = data.indexOf('\r\n\r\n');
      if (end < 0) {
        this.pending = data;
        return;
      }
      if (!data.subarray(0, 12).toString('latin1').includes(this.status)) {
        this.socket.destroy();
        return;
      }
      this.opened = true;
      this.events.onOpen();
      data = data.subarray(end + 4);
    }
    const used = this.consume(data);
    if (used < data.length) this.pending = Buffer.from(data.subarray(used));
  }
}

export class BenchClient extends BenchStreamClient {
  constructor(url: URL, events: ClientEvents) {
    super(
      url,
      events,
      'Upgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n',
      ' 101',
    );
  }

  protected consume(data: Buffer): number {
    let offset = 0;
    while (data.length - offset >= 2) {
      const opcode = data[offset] & 0x0f;
      let length = data[offset + 1] & 0x7f;
      let header = 2;
      if (length === 126) {
        if (data.length - offset < 4) break;
        length = data.readUInt16BE(offset + 2);
        header = 4;
      } else if (length === 127) {
        if (data.length - offset < 10) break;
        length = Number(data.readBigUInt64BE(offset + 2));
        header = 10;
      }
      if (data.length - offset < header + length) break;
      const payload = data.subarray(offset + header, offset + header + length);
      offset += header + length;
      if (opcode === OP_TEXT) this.events.onFrame(payload);
      else if (opcode === OP_PING) this.pong(payload);
      else if (opcode === OP_CLOSE) this.socket.end();
    }
    return offset;
  }

  /** Client frames must be masked; a zero mask leaves the payload as it is. */
  private pong(payload: Buffer): void {
    const frame = Buffer.alloc(6 + payload.length);
    frame[0] = 0x80 | 0xa;
    frame[1] = 0x80 | payload.length;
    payload.copy(frame, 6);
    this.socket.write(frame);
  }
}
