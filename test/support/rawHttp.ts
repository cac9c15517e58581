import { connect } from 'node:net';

// HTTP/1.1 over a plain socket, for requests fetch and node:http refuse to send (NUL bytes and invalid
// UTF-8 in the request line, headers and body). One request per connection (`Connection: close`).

export interface RawReply {
  status: number;
  /** Header names lower-cased; repeated headers joined with ", ". */
  headers: Record<string, string>;
  body: Buffer;
}

export interface RawRequest {
  method: string;
  /** Sent as is: may hold any bytes but CR and LF. */
  target: string | Buffer;
  headers?: Array<[string, string | Buffer]>;
  body?: Buffer;
}

export function rawRequest(baseUrl: string, req: RawRequest, timeoutMs = 10_000): Promise<RawReply> {
  const { hostname, port } = new URL(baseUrl);
  const lines: Buffer[] = [
    Buffer.concat([Buffer.from(`${req.method} `, 'latin1'), Buffer.from(req.target as Buffer | string), Buffer.from(' HTTP/1.1\r\n')]),
  ];
  lines.push(Buffer.from(`Host: ${hostname}:${port}\r\nConnection: close\r\n`));
  for (const [name, value] of req.headers ?? [])
    lines.push(Buffer.concat([Buffer.from(`${name}: `), Buffer.from(value as Buffer | string), Buffer.from('\r\n')]));
  if (req.body) lines.push(Buffer.from(`Content-Length: ${req.body.length}\r\n`));
  lines.push(Buffer.from('\r\n'));
  if (req.body) lines.push(req.body);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname);
    const chunks: Buffer[] = [];
    const timer = setTimeout(() => socket.destroy(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
    let settled = false;
    const finish = () => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      socket.destroy();
      try {
        resolve(parse(Buffer.concat(chunks), req.method));
      } catch (err) {
        reject(err);
      }
    };
    socket.on('data', (chunk) => {
      chunks.push(chunk);
      // An event stream never ends by itself: its answer is complete with its headers.
      const head = Buffer.concat(chunks);
      const split = head.indexOf('\r\n\r\n');
      if (split >= 0 && /\r\ncontent-type: text\/event-stream/i.test(head.subarray(0, split).toString('latin1'))) finish();
    });
    socket.on('error', (err) => {
      if (settled) return;
      clearTimeout(timer);
      reject(err);
    });
    socket.on('end', finish);
    socket.write(Buffer.concat(lines));
  });
}

function parse(raw: Buffer, method: string): RawReply {
  const split = raw.indexOf('\r\n\r\n');
  if (split < 0) throw new Error(`incomplete response: ${JSON.stringify(raw.toString('latin1').slice(0, 200))}`);
  const [statusLine, ...headerLines] = raw.subarray(0, split).toString('latin1').split('\r\n');
  const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(statusLine)?.[1]);
  if (!status) throw new Error(`bad status line: ${statusLine}`);
  const headers: Record<string, string> = {};
  for (const line of headerLines) {
    const colon = line.indexOf(':');
    const name = line.slice(0, colon).trim().toLowerCase();
    const value = line.slice(colon + 1).trim();
    headers[name] = headers[name] === undefined ? value : `${headers[name]}, ${value}`;
  }
  let body = method === 'HEAD' ? Buffer.alloc(0) : raw.subarray(split + 4);
  if (headers['transfer-encoding']?.includes('chunked')) body = unchunk(body);
  return { status, headers, body };
}

function unchunk(data: Buffer): Buffer {
  const parts: Buffer[] = [];
  let at = 0;
  for (;;) {
    const eol = data.indexOf('\r\n', at);
    if (eol < 0) break;
    const size = parseInt(data.subarray(at, eol).toString('latin1'), 16);
    if (!size) break;
    parts.push(data.subarray(eol + 2, eol + 2 + size));
    at = eol + 2 + size + 2;
  }
  return Buffer.concat(parts);
}
