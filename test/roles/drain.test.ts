import { expect } from 'chai';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { DRAIN_GRACE_MS } from '../../src/roles/web.ts';
import { createStation, createToken, eventually } from '../support/factories.ts';
import { testMode } from '../support/mode.ts';
import { freePort } from '../support/ports.ts';

// SIGTERM on a real web process, with raw sockets: requests that had started arriving when the signal
// came are answered once they complete; idle connections close at once; a request that never completes
// is cut after the grace, and the process still exits within the 25 s budget. Services mode runs the
// `web` role; embedded mode runs `waveline dev` (the only role that runs embedded), whose web is the same.

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const HALF_SENT = 25;

/** A raw connection that records what it receives and how it ended. */
class Conn {
  readonly socket: Socket;
  received = '';
  closedAt: number | null = null;
  error: Error | null = null;
  constructor(port: number) {
    this.socket = connect(port, '127.0.0.1');
    this.socket.setEncoding('latin1');
    this.socket.on('data', (chunk: string) => (this.received += chunk));
    this.socket.on('error', (err) => (this.error = err));
    this.socket.on('close', () => (this.closedAt = Date.now()));
  }
  opened(): Promise<void> {
    return new Promise((ok, fail) => {
      this.socket.once('connect', ok);
      this.socket.once('error', fail);
    });
  }
  send(bytes: string): Promise<void> {
    return new Promise((ok, fail) => this.socket.write(bytes, (err) => (err ? fail(err) : ok())));
  }
  /** The status of the first complete response, once its body (Content-Length) is in. */
  response(): { status: number; headers: string; body: string } | null {
    const end = this.received.indexOf('\r\n\r\n');
    if (end < 0) return null;
    const headers = this.received.slice(0, end);
    const length = Number(/\r\ncontent-length: *(\d+)/i.exec(headers)?.[1] ?? 0);
    const body = this.received.slice(end + 4);
    if (Buffer.byteLength(body, 'latin1') < length) return null;
    return { status: Number(headers.split(' ')[1]), headers, body };
  }
}

describe('web drains on SIGTERM (raw sockets against a real process)', function () {
  this.timeout(90_000);
  let child: ChildProcess | null = null;
  let dataDir: string | null = null;
  const conns: Conn[] = [];

  afterEach(() => {
    for (const conn of conns.splice(0)) conn.socket.destroy();
    if (child && child.exitCode === null) child.kill('SIGKILL');
    child = null;
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
    dataDir = null;
  });

  it('answers half-sent headers and half-sent bodies completed after the signal, closes idle connections at once, cuts a stalled one after the grace and exits in time', async () => {
    const [port, gatewayPort] = [await freePort(), await freePort()];
    const embedded = testMode() === 'embedded';
    const env: Record<string, string> = { ...(process.env as Record<string, string>), LOG_LEVEL: 'info', PORT: String(port) };
    if (embedded) {
      dataDir = mkdtempSync(join(tmpdir(), 'waveline-drain-'));
      Object.assign(env, {
        DATABASE_URL: '',
        REDIS_URL: '',
        WAVELINE_DATA_DIR: dataDir,
        WAVELINE_DEMO: '0',
        GATEWAY_PORT: String(gatewayPort),
      });
    }
    const proc = spawn(process.execPath, ['src/main.ts', embedded ? 'dev' : 'web'], { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe'] });
    child = proc;
    let output = '';
    proc.stdout!.on('data', (d) => (output += d));
    proc.stderr!.on('data', (d) => (output += d));
    const exited = new Promise<number | null>((ok) => proc.on('exit', (code) => ok(code)));
    const base = `http://127.0.0.1:${port}`;
    await eventually(
      async () =>
        (await fetch(`${base}/healthz`).catch(() => null))?.ok || (proc.exitCode !== null ? Promise.reject(new Error(output)) : null),
      { timeoutMs: 30_000, intervalMs: 100 },
    );

    const station = await createStation(base);
    const { token: listener } = await createToken(base, station.id, ['listener:read']);
    const { token: encoder } = await createToken(base, station.id, ['ingest:write']);

    // Half of a GET's headers, and an ingest POST whose headers are whole but whose body is half-sent.
    const get = `GET /api/v1/stations/${station.slug} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${listener}\r\n\r\n`;
    const ingestBody = (i: number) => JSON.stringify({ artist: 'Drain Band', title: `Track ${i}` });
    const ingest = (i: number) =>
      `POST /api/v1/integrations/playback?stationSlug=${station.slug} HTTP/1.1\r\nHost: 127.0.0.1\r\n` +
      `Authorization: Bearer ${encoder}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(ingestBody(i))}\r\n\r\n` +
      ingestBody(i);
    const halfGets = Array.from({ length: HALF_SENT }, () => new Conn(port));
    const halfIngests = Array.from({ length: HALF_SENT }, () => new Conn(port));
    const stalled = new Conn(port); // sends half its headers and never the rest
    const silent = new Conn(port); // connects and sends nothing
    const idle = new Conn(port); // one whole keep-alive request, then idle
    conns.push(...halfGets, ...halfIngests, stalled, silent, idle);
    await Promise.all(conns.map((c) => c.opened()));
    const ingestSplit = (i: number) => ingest(i).length - Math.floor(ingestBody(i).length / 2);
    await Promise.all([
      ...halfGets.map((c) => c.send(get.slice(0, Math.floor(get.length / 2)))),
      ...halfIngests.map((c, i) => c.send(ingest(i).slice(0, ingestSplit(i)))),
      stalled.send(get.slice(0, 20)),
      idle.send(get),
    ]);
    await eventually(() => idle.response()?.status === 200, { timeoutMs: 10_000 });
    // One more whole request, answered after the server has read the half-sent bytes written before it.
    expect((await fetch(`${base}/healthz`)).status).to.equal(200);

    const signalledAt = Date.now();
    proc.kill('SIGTERM');

    // An idle keep-alive connection closes at once, far inside the grace.
    await eventually(() => idle.closedAt !== null, { timeoutMs: 3_000, intervalMs: 10 });
    expect(idle.closedAt! - signalledAt).to.be.lessThan(DRAIN_GRACE_MS / 2);
    // No new connections.
    await eventually(
      () =>
        new Promise<boolean>((ok) => {
          const probe = connect(port, '127.0.0.1');
          probe.once('connect', () => (probe.destroy(), ok(false)));
          probe.once('error', (err: NodeJS.ErrnoException) => ok(err.code === 'ECONNREFUSED'));
        }),
      { timeoutMs: 3_000, intervalMs: 50 },
    );

    // The other half of every request, one second after the signal (a client on a slow link).
    await new Promise((ok) => setTimeout(ok, 1_000));
    for (const conn of [...halfGets, ...halfIngests]) expect(conn.closedAt, 'a half-sent request keeps its connection').to.equal(null);
    await Promise.all([
      ...halfGets.map((c) => c.send(get.slice(Math.floor(get.length / 2)))),
      ...halfIngests.map((c, i) => c.send(ingest(i).slice(ingestSplit(i)))),
    ]);
    await eventually(() => [...halfGets, ...halfIngests].every((c) => c.response() !== null), { timeoutMs: 10_000, intervalMs: 20 });
    for (const conn of halfGets) {
      expect(conn.error, 'no reset').to.equal(null);
      const res = conn.response()!;
      expect(res.status, res.body).to.equal(200);
      expect(JSON.parse(res.body).slug).to.equal(station.slug);
      expect(res.headers.toLowerCase()).to.include('connection: close');
    }
    for (const conn of halfIngests) {
      expect(conn.error, 'no reset').to.equal(null);
      const res = conn.response()!;
      expect(res.status, res.body).to.be.within(200, 299);
    }
    // Answered connections end (Connection: close) rather than lingering as keep-alive.
    await eventually(() => [...halfGets, ...halfIngests].every((c) => c.closedAt !== null), { timeoutMs: 5_000 });

    // The stalled request is closed after the grace, not before; a connection that never sent a byte stays
    // no longer than the grace (Node counts a new connection as a request begun, for its header timeout, so
    // it may be kept that long for a request about to arrive). The process then exits 0 within 25 s.
    await eventually(() => stalled.closedAt !== null && silent.closedAt !== null, { timeoutMs: 2 * DRAIN_GRACE_MS });
    expect(stalled.closedAt! - signalledAt).to.be.at.least(DRAIN_GRACE_MS - 100);
    expect(silent.closedAt! - signalledAt).to.be.below(DRAIN_GRACE_MS + 2_000);
    expect(stalled.response(), 'a request that never arrived is not answered').to.equal(null);
    const code = await exited;
    expect(code, output).to.equal(0);
    expect(Date.now() - signalledAt).to.be.lessThan(25_000);
  });
});
