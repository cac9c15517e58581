// The listener inbox's rows and vocabulary (docs/inbox.md).

export const MESSAGE_KINDS = ['message', 'dedication', 'request'] as const;
export type MessageKind = (typeof MESSAGE_KINDS)[number];

export const MESSAGE_STATUSES = ['pending', 'held', 'shown', 'answered', 'hidden'] as const;
export type MessageStatus = (typeof MESSAGE_STATUSES)[number];

/** What the studio may set a message to. */
export const STUDIO_STATUSES = ['shown', 'answered', 'hidden'] as const;
export type StudioStatus = (typeof STUDIO_STATUSES)[number];

export const REFUSAL_REASONS = ['recently-played', 'artist-recently-played', 'already-requested'] as const;
export type RefusalReason = (typeof REFUSAL_REASONS)[number];

/** The same text and kind from the same client within this long is the same message. */
export const REPEAT_WINDOW_MS = 10 * 60_000;
/** Messages one address may send a station an hour. */
export const PER_ADDRESS_PER_HOUR = 30;
export const HOUR_MS = 3600_000;
/** The request catalogue: tracks played this recently. */
export const CATALOGUE_DAYS = 90;

export interface MessageRow {
  id: string;
  station_id: string;
  kind: MessageKind;
  text: string | null;
  name: string | null;
  location: string | null;
  track_artist: string | null;
  track_title: string | null;
  artist_key: string | null;
  title_key: string | null;
  status: MessageStatus;
  client_hash: string;
  client: string;
  address_hash: string;
  created_at: Date;
  updated_at: Date;
  /** The station's stream position of the message's last change (bigint: a string from pg). */
  seq: string | number;
}

export interface BanRow {
  id: string;
  station_id: string;
  client_hash: string;
  client: string;
  address_hash: string;
  expires_at: Date | null;
  created_at: Date;
}

/** How a listener is told of a message's status: never that it is hidden (a ban stays unknown to its sender). */
export const listenerStatus = (status: MessageStatus): MessageStatus => (status === 'hidden' ? 'pending' : status);
