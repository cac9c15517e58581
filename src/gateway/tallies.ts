import { gatewayTallies } from './metrics.ts';

type TransportTallies = ReturnType<typeof gatewayTallies>;

export type Transport = 'websocket' | 'sse';

/**
 * The gateway's per-transport series (connections, frames and bytes sent, slow consumers), looked up once
 * and counted in plain numbers (lib/metrics.ts, `Tally`); nothing is counted when metrics are off.
 */
export class SentTallies {
  readonly on: boolean;
  readonly websocket: TransportTallies;
  readonly sse: TransportTallies;

  constructor(on: boolean) {
    this.on = on;
    this.websocket = gatewayTallies('websocket');
    this.sse = gatewayTallies('sse');
    if (on) for (const transport of [this.websocket, this.sse]) for (const metric of Object.values(transport)) metric.show();
  }

  /** Counts a frame as sent to `receivers` clients (waveline_gateway_frames_sent_total, bytes). */
  sent(frame: Buffer | string, receivers = 1, transport: Transport = 'websocket'): void {
    if (!this.on || receivers === 0) return;
    this[transport].frames.inc(receivers);
    this[transport].bytes.inc(receivers * (typeof frame === 'string' ? Buffer.byteLength(frame) : frame.length));
  }

  /** Counts the SSE messages of one fan-out write (fanout.ts). */
  sseWritten(frames: number, bytes: number): void {
    if (!this.on) return;
    this.sse.frames.inc(frames);
    this.sse.bytes.inc(bytes);
  }
}
