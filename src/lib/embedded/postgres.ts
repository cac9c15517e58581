import { closeSync, mkdirSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { PGlite } from '@electric-sql/pglite';
import type { PGLiteSocketServer } from '@electric-sql/pglite-socket';
import { StartupError } from '../startup.ts';

// The embedded Postgres (docs/embedded.md#when-the-embedded-default-applies): PGlite — Postgres compiled to WebAssembly —
// with its data in `<dataDir>/db`, served over the Postgres wire protocol on a private Unix socket so
// that knex, pg, pipelined transactions and the gateway's own pool reach it through the very code that
// reaches a Postgres server. PGlite is one session: pglite-socket queues the connections' statements and,
// while one connection is inside a transaction, runs only that connection's
// (docs/embedded.md#pglite-through-the-socket-what-changed-and-the-limits).

/** Socket directories of the embedded databases this process serves. */
const socketDirs = new Set<string>();
/** Named statements prepared in each embedded session, as pg tracks them per connection (see below). */
const sessions = new Map<string, { parsed: Record<string, string>; submitted: Record<string, string> }>();

/**
 * Every connection to the embedded socket is the same PGlite session, so a named (prepared) statement
 * one connection prepared exists for all: a second Parse of the name fails with 42P05. pg remembers the
 * names it prepared per connection; pointing every connection to one session at one record makes pg see
 * the session as it is, and the code's named statements run unchanged. A no-op for any other server.
 */
export function shareEmbeddedSession(client: unknown): void {
  const c = client as {
    host?: string;
    connection?: { parsedStatements: Record<string, string>; submittedNamedStatements: Record<string, string> };
  };
  if (!c.host || !c.connection || !socketDirs.has(c.host)) return;
  const session = sessions.get(c.host)!;
  c.connection.parsedStatements = session.parsed;
  c.connection.submittedNamedStatements = session.submitted;
}

/** Whether `databaseUrl` reaches an embedded database this process serves (its private socket). */
export function isEmbeddedDatabase(databaseUrl: string): boolean {
  try {
    const host = new URL(databaseUrl).searchParams.get('host');
    return host !== null && socketDirs.has(host);
  } catch {
    return false;
  }
}

export class DataDirLockedError extends StartupError {}

/** Port number in the socket file's name (`.s.PGSQL.<port>`); the socket's directory is private. */
const SOCKET_PORT = 5432;

export interface EmbeddedPostgres {
  /** A `postgres://` URL reaching the socket (database `postgres`, PGlite's only database). */
  url: string;
  close(): Promise<void>;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Takes `<dataDir>/db.lock` (our pid) or refuses: PGlite has no lock of its own and two processes
 * writing one data directory would corrupt it. A lock whose process is gone (killed) is taken over.
 */
function lockDataDir(dataDir: string): () => void {
  const lockFile = join(dataDir, 'db.lock');
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const fd = openSync(lockFile, 'wx');
      writeFileSync(fd, String(process.pid));
      closeSync(fd);
      return () => rmSync(lockFile, { force: true });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      const holder = Number(readFileSync(lockFile, 'utf8').trim());
      if (Number.isInteger(holder) && holder > 0 && holder !== process.pid && alive(holder)) {
        throw new DataDirLockedError(
          `the embedded database ${resolve(dataDir, 'db')} is in use by another Waveline process (pid ${holder}); stop it first, or set DATABASE_URL to a Postgres server to run several processes`,
        );
      }
      rmSync(lockFile, { force: true });
    }
  }
  throw new DataDirLockedError(`could not lock the embedded database in ${resolve(dataDir)}`);
}

/**
 * pglite-socket queues the connections' messages one by one and keeps serving one connection only while
 * PGlite is inside a transaction. An extended-protocol batch (Parse, Bind, Describe, Execute … Sync) uses
 * the session's unnamed statement and portal, so another connection's message in the middle of it
 * breaks both ("unnamed prepared statement does not exist", rows under the wrong description). The
 * server asks `isInTransaction()` to decide; answering true also while a connection's batch is open
 * (its last message was neither Sync nor a simple Query) makes it serve that batch to its end.
 */
function oneBatchAtATime(db: PGlite): PGlite {
  let batchOpen = false;
  const SYNC = 0x53;
  const QUERY = 0x51;
  const TERMINATE = 0x58;
  return new Proxy(db, {
    get(target, prop, receiver) {
      if (prop === 'isInTransaction') return () => batchOpen || target.isInTransaction();
      if (prop === 'execProtocolRawStream') {
        return (message: Uint8Array, options: Parameters<PGlite['execProtocolRawStream']>[1]) => {
          // A chunk may carry several messages; only the last one's type says whether the batch ends.
          batchOpen = !endsWithSyncOrQuery(message);
          return target.execProtocolRawStream(message, options);
        };
      }
      if (prop === 'exec') {
        return (...args: Parameters<PGlite['exec']>) => {
          batchOpen = false; // the server's ROLLBACK for a connection that went away mid-transaction
          return target.exec(...args);
        };
      }
      const value = Reflect.get(target, prop, receiver);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });

  function endsWithSyncOrQuery(message: Uint8Array): boolean {
    // A startup message has no type byte: length, then protocol 3.0 (196608). PGlite answers it ready.
    if (message.length >= 8 && message[4] === 0 && message[5] === 3 && message[6] === 0 && message[7] === 0) return true;
    let at = 0;
    let last = -1;
    while (at + 5 <= message.length) {
      last = message[at];
      const length = ((message[at + 1] << 24) | (message[at + 2] << 16) | (message[at + 3] << 8) | message[at + 4]) >>> 0;
      at += 1 + length;
    }
    return last === SYNC || last === QUERY || last === TERMINATE || last === -1;
  }
}

/** Opens (creating on first use) the PGlite database in `<dataDir>/db` and serves it on a private socket. */
export async function startEmbeddedPostgres(dataDir: string): Promise<EmbeddedPostgres> {
  mkdirSync(dataDir, { recursive: true });
  const unlock = lockDataDir(dataDir);
  let db: PGlite | null = null;
  let server: PGLiteSocketServer | null = null;
  const socketDir = mkdtempSync(join(tmpdir(), 'waveline-pg-'));
  try {
    // Loaded only here: roles on a Postgres server never load the WebAssembly build.
    const [{ PGlite }, { PGLiteSocketServer }] = await Promise.all([import('@electric-sql/pglite'), import('@electric-sql/pglite-socket')]);
    db = await PGlite.create(join(resolve(dataDir), 'db'));
    server = new PGLiteSocketServer({ db: oneBatchAtATime(db), path: join(socketDir, `.s.PGSQL.${SOCKET_PORT}`), maxConnections: 100 });
    await server.start();
  } catch (err) {
    await server?.stop().catch(() => undefined);
    await db?.close().catch(() => undefined);
    rmSync(socketDir, { recursive: true, force: true });
    unlock();
    throw err;
  }
  const opened = { db, server };
  socketDirs.add(socketDir);
  sessions.set(socketDir, { parsed: {}, submitted: {} });
  let closing: Promise<void> | null = null;
  return {
    url: `postgres://postgres@localhost:${SOCKET_PORT}/postgres?host=${encodeURIComponent(socketDir)}`,
    close() {
      closing ??= (async () => {
        await opened.server.stop().catch(() => undefined);
        await opened.db.close();
        rmSync(socketDir, { recursive: true, force: true });
        socketDirs.delete(socketDir);
        sessions.delete(socketDir);
        unlock();
      })();
      return closing;
    },
  };
}
