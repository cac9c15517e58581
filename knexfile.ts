import type { Knex } from 'knex';
import { loadConfig } from './src/config.ts';

// Migrations are TypeScript files run by Node's own type stripping, in timestamp order.
export const migrations: Knex.MigratorConfig = {
  directory: new URL('./migrations', import.meta.url).pathname,
  loadExtensions: ['.ts'],
  tableName: 'knex_migrations',
};

const config: Knex.Config = {
  client: 'pg',
  connection: loadConfig().databaseUrl,
  migrations,
};

export default config;
