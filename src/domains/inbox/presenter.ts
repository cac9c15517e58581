import type { Message } from './schemas.ts';
import type { MessageRow } from './model.ts';

// The studio's view of a message: the list, the PATCH answer, the stream and the `inbox.message` webhook
// all show this one shape. The client is its pseudonym, never its HMAC.

export const presentMessage = (row: MessageRow): Message => ({
  id: row.id,
  kind: row.kind,
  text: row.text,
  name: row.name,
  location: row.location,
  track: row.track_title !== null ? { artist: row.track_artist ?? '', title: row.track_title } : null,
  status: row.status,
  client: row.client,
  receivedAt: row.created_at.toISOString(),
  updatedAt: row.updated_at.toISOString(),
});
