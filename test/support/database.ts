import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isEmbeddedDatabase, startEmbeddedPostgres } from '../../src/lib/embedded/postgres.ts';
import { recreateDatabase } from '../../src/lib/migrate.ts';

/**
 * An empty database of a test's own (not yet migrated), beside the run's: `<test db>_<suffix>` recreated
 * on a Postgres server; in embedded mode — PGlite holds one database — a second PGlite in a temporary
 * directory. `close()` after the test (a no-op on a server, where the next run recreates it).
 */
export async function freshDatabase(suffix: string): Promise<{ url: string; close(): Promise<void> }> {
  const base = process.env.DATABASE_URL as string;
  if (isEmbeddedDatabase(base)) {
    const dir = mkdtempSync(join(tmpdir(), `waveline-test-${suffix}-`));
    const postgres = await startEmbeddedPostgres(dir);
    return {
      url: postgres.url,
      async close() {
        await postgres.close();
        rmSync(dir, { recursive: true, force: true });
      },
    };
  }
  const url = new URL(base);
  url.pathname = `${url.pathname}_${suffix}`;
  await recreateDatabase(url.toString());
  return { url: url.toString(), close: async () => undefined };
}
