import pg from 'pg';
import { migrations } from '../../knexfile.ts';
import type { Db } from './db.ts';

/** Runs `fn` on a connection to the server's `postgres` database, with the name of the URL's database. */
async function onServer(databaseUrl: string, fn: (client: pg.Client, name: string) => Promise<void>): Promise<void> {
  const url = new URL(databaseUrl);
  const name = decodeURIComponent(url.pathname.replace(/^\//, ''));
  if (!name) return;
  url.pathname = '/postgres';
  const client = new pg.Client({ connectionString: url.toString() });
  await client.connect();
  try {
    await fn(client, name);
  } finally {
    await client.end();
  }
}

const quoted = (name: string): string => `"${name.replace(/"/g, '""')}"`;

/** Drops (forcing out its sessions) and creates the URL's database: tests and benchmarks start clean. */
export function recreateDatabase(databaseUrl: string): Promise<void> {
  return onServer(databaseUrl, async (client, name) => {
    await client.query(`DROP DATABASE IF EXISTS ${quoted(name)} WITH (FORCE)`);
    await client.query(`CREATE DATABASE ${quoted(name)}`);
  });
}

/** Creates the database named in the URL when it does not exist yet (a fresh machine, a test run). */
export function ensureDatabase(databaseUrl: string): Promise<void> {
  return onServer(databaseUrl, async (client, name) => {
    const found = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
    if (found.rowCount === 0) {
      await client.query(`CREATE DATABASE ${quoted(name)}`).catch((err: { code?: string }) => {
        if (err.code !== '42P04') throw err; // created concurrently by another process
      });
    }
  });
}

export async function migrateLatest(db: Db): Promise<string[]> {
  const [, applied] = (await db.migrate.latest(migrations)) as [number, string[]];
  return applied;
}
