import type { Db } from '../../../lib/db.ts';
import { ProviderMismatchError } from '../../../lib/errors.ts';
import { sha256Hex } from '../../../lib/tokens.ts';
import type { Station } from '../../stations/model.ts';
import type { RegisterDeviceBody, Topics } from './schemas.ts';

// Push devices are stored per (station, token): the SHA-256 of the token is the key, so the raw token
// (needed to send) is never used in a lookup, and a token can never be associated with a staff user.
// Tokens are never logged: nothing here passes them to the logger.

const TABLE = 'push_devices';

/** Topic columns to write: only the topics the caller named. */
function topicColumns(topics: Topics | undefined): Record<string, boolean> {
  const columns: Record<string, boolean> = {};
  if (topics?.alerts !== undefined) columns.topic_alerts = topics.alerts;
  if (topics?.content !== undefined) columns.topic_content = topics.content;
  return columns;
}

/** 409 PROVIDER_MISMATCH when the station has no push provider configured, or another one. */
export function assertProviderMatches(station: Station, provider: RegisterDeviceBody['provider']): void {
  if (station.push.provider === null) throw new ProviderMismatchError('This station has no push provider configured.');
  if (station.push.provider !== provider) {
    throw new ProviderMismatchError(`This station sends push notifications through ${station.push.provider}, not ${provider}.`);
  }
}

/**
 * Registers a device, or refreshes an existing registration of the same token (platform, provider and
 * updatedAt; topics only when the body names them). A first registration gets topics {alerts: true,
 * content: true} unless the body says otherwise. One statement, so concurrent registrations of one
 * token never duplicate it.
 */
export async function registerDevice(db: Db, input: { station: Station; body: RegisterDeviceBody; now: Date }): Promise<void> {
  const { station, body, now } = input;
  assertProviderMatches(station, body.provider);
  const refreshed = { platform: body.platform, provider: body.provider, updated_at: now, ...topicColumns(body.topics) };
  await db(TABLE)
    .insert({ station_id: station.id, token_hash: sha256Hex(body.token), token: body.token, created_at: now, ...refreshed })
    .onConflict(['station_id', 'token_hash'])
    .merge(refreshed);
}

/** Changes only the listed topics (none listed changes nothing); false when the token is not registered for the station. */
export async function updateTopics(db: Db, input: { stationId: string; token: string; topics: Topics; now: Date }): Promise<boolean> {
  const registration = db(TABLE).where({ station_id: input.stationId, token_hash: sha256Hex(input.token) });
  const columns = topicColumns(input.topics);
  if (Object.keys(columns).length === 0) return (await registration.first('token_hash')) !== undefined;
  const changed = await registration.update({ ...columns, updated_at: input.now });
  return changed > 0;
}

/** Removes the registration if there is one; unregistering an unknown token is not an error. */
export async function unregisterDevice(db: Db, input: { stationId: string; token: string }): Promise<void> {
  await db(TABLE)
    .where({ station_id: input.stationId, token_hash: sha256Hex(input.token) })
    .delete();
}
