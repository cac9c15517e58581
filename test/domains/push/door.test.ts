import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';

// Push opens a door (docs/push.md#how-sending-works-srcdomainspushnotifications): a notification is created
// for a set of devices only through push/notifications/queue.ts, and no code outside src/domains/push writes
// push's tables (reminders, the publish trigger's caller and every other domain knock on the door instead).

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const TABLES = 'push_(?:notifications|deliveries|devices|claims|credentials)';
const SQL_WRITE = new RegExp(`\\b(?:INSERT\\s+INTO|UPDATE|DELETE\\s+FROM)\\s+${TABLES}\\b`, 'gi');
/** A knex builder on one of the tables whose chain (up to the statement's end) writes. */
const KNEX_WRITE = new RegExp(
  `\\(\\s*['"\`]${TABLES}['"\`]\\s*\\)[^;]*?\\.(?:insert|update|upsert|del|delete|merge|truncate|increment|decrement)\\(`,
  'g',
);

function writesOf(code: string): string[] {
  return [...code.matchAll(SQL_WRITE), ...code.matchAll(KNEX_WRITE)].map((match) => match[0].replace(/\s+/g, ' ').slice(0, 80));
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith('.ts') ? [path] : [];
  });
}

describe('push opens a door', () => {
  it('no file of src/ or workers/ outside src/domains/push writes push’s tables', () => {
    const files = [...sourceFiles(join(ROOT, 'src')), ...sourceFiles(join(ROOT, 'workers'))].map((path) => relative(ROOT, path));
    expect(files.length).to.be.greaterThan(200);
    const pushFiles = files.filter((file) => file.startsWith('src/domains/push/'));
    // The reader sees push's own writes (it would see another domain's the same way).
    expect(pushFiles.flatMap((file) => writesOf(readFileSync(join(ROOT, file), 'utf8')))).to.not.be.empty;
    const offending = files
      .filter((file) => !file.startsWith('src/domains/push/'))
      .flatMap((file) => writesOf(readFileSync(join(ROOT, file), 'utf8')).map((write) => `${file}: ${write}`));
    expect(offending).to.deep.equal([]);
  });

  it('the reader finds raw SQL and knex writes, and leaves reads and row locks alone', () => {
    expect(writesOf("await trx('push_notifications').insert(row);")).to.have.length(1);
    expect(writesOf("await trx('push_notifications')\n  .where({ id })\n  .delete();")).to.have.length(1);
    expect(writesOf('INSERT INTO push_deliveries (notification_id) SELECT 1')).to.have.length(1);
    expect(writesOf('UPDATE push_notifications SET targeted = 1')).to.have.length(1);
    expect(writesOf("await trx('push_devices').where({ station_id }).forUpdate().first('token_hash');")).to.deep.equal([]);
    expect(writesOf("await db('push_notifications').where({ id }).first('status');")).to.deep.equal([]);
    expect(writesOf('NOT EXISTS (SELECT 1 FROM push_deliveries r WHERE r.token_hash = d.token_hash)')).to.deep.equal([]);
  });
});
