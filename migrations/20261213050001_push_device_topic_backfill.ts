import type { Knex } from 'knex';

// Data backfill: a notification to `alerts` or `content` went to every device with that topic on (its
// targets written when its sending started); one to `reminders` had its devices listed when it was
// created, and keeps device_topic null.

export async function up(knex: Knex): Promise<void> {
  await knex.raw(`UPDATE push_notifications SET device_topic = topic WHERE topic IN ('alerts', 'content') AND device_topic IS NULL;`);
}

// The column goes with its own migration's down.
export async function down(): Promise<void> {}
