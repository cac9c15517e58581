import { BenchStreamClient, type ClientEvents } from './client.ts';

// A minimal SSE client for the bench fleet: a TCP socket, one GET, and a reader of the chunked response
// (the `eventsource` package would make the fleet, not the server, the thing being measured). The gateway
// writes one HTTP chunk per stream and turn, holding one message or several; comments (`: ping`) and the
// `retry:` line are not messages.

export class BenchSseClient extends BenchStreamClient {
  constructor(url: URL, events: ClientEvents, headers = '') {
    super(url, events, `Accept: text/event-stream\r\n${headers}`, ' 200');
  }

  protected consume(data: Buffer): number {
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
    return offset;
  }
}
