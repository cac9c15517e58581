import type { Knex } from 'knex';

// push_notifications.device_topic: the topic switch whose devices a notification goes to, targeted when
// its sending starts (every device of the station with the topic on then); null when its devices were
// listed when it was created (docs/push.md#how-sending-works-srcdomainspushnotifications). The backfill is
// the next migration.

export async function up(knex: Knex): Promise<void> {
  await knex.raw(`ALTER TABLE push_notifications ADD COLUMN device_topic text;`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`ALTER TABLE push_notifications DROP COLUMN IF EXISTS device_topic;`);
}
