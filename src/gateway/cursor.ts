import { createHash } from 'node:crypto';

// The resume cursor (docs/realtime.md#resume-reset-and-synced): an opaque string of
// [A-Za-z0-9._~-], at most 400 characters, naming the position of every channel of a connection.
//
//   c1                                 a connection whose channels have no position yet (state not sent)
//   c1.<key>~<epoch>~<seq>~<mask>…     one segment per positioned channel
//
// `key` is 8 base64url characters of the channel's SHA-256 (station ids may be 80 characters; ten of
// them would not fit), `epoch` the station's feed epoch, `seq` the station's feed sequence (base 36) up to
// which the client has every change, `mask` the kinds the station's modules switched off then (hex):
// after a module change the client is missing rows that were never sent to it, so that is a reset.
// A connection with `stream=` (listener time, delay.ts) adds `~<heard>`: the heard time (epoch ms, base
// 36) up to which its delayed rows (now-playing, on-air) were sent; its `seq` still counts every change.

const VERSION = 'c1';
export const MAX_CURSOR_LENGTH = 400;
const CURSOR_CHARS = /^[A-Za-z0-9._~-]{1,400}$/;
const SEGMENT = /^([A-Za-z0-9_-]{8})~([A-Za-z0-9]{1,16})~([0-9a-z]{1,11})~([0-9a-f])(?:~([0-9a-z]{1,11}))?$/;

/** A channel's position as a cursor names it. */
export interface Position {
  epoch: string;
  seq: number;
  mask: number;
  /** On a delayed connection: the heard time (epoch ms) up to which its delayed rows were sent. */
  heard?: number;
}

/** The 8-character key naming a channel in a cursor. */
export function channelKey(channel: string): string {
  return createHash('sha256').update(channel).digest('base64url').slice(0, 8);
}

/** One channel's segment; joined with `cursorOf`. */
export function segmentOf(key: string, position: Position): string {
  const live = `${key}~${position.epoch}~${position.seq.toString(36)}~${position.mask.toString(16)}`;
  return position.heard === undefined ? live : `${live}~${Math.floor(position.heard).toString(36)}`;
}

/** The cursor of positioned channels' segments (none: `c1`, "no channel has a position yet"). */
export function cursorOf(segments: readonly string[]): string {
  return segments.length === 0 ? VERSION : `${VERSION}.${segments.join('.')}`;
}

/** Recently parsed cursors: the clients of a reconnect burst mostly bring the same few. */
const parsed = new Map<string, ReadonlyMap<string, Position> | null>();

/** Positions by channel key, or null when the text is not a cursor this gateway wrote. */
export function parseCursor(text: string): ReadonlyMap<string, Position> | null {
  const hit = parsed.get(text);
  if (hit !== undefined) return hit;
  const positions = parse(text);
  if (parsed.size >= 256) parsed.clear();
  parsed.set(text, positions);
  return positions;
}

function parse(text: string): Map<string, Position> | null {
  if (!CURSOR_CHARS.test(text)) return null;
  const parts = text.split('.');
  if (parts[0] !== VERSION) return null;
  const positions = new Map<string, Position>();
  for (const part of parts.slice(1)) {
    const match = SEGMENT.exec(part);
    if (!match || positions.has(match[1])) return null;
    const seq = parseInt(match[3], 36);
    if (!Number.isSafeInteger(seq)) return null;
    const position: Position = { epoch: match[2], seq, mask: parseInt(match[4], 16) };
    if (match[5] !== undefined) {
      position.heard = parseInt(match[5], 36);
      if (!Number.isSafeInteger(position.heard)) return null;
    }
    positions.set(match[1], position);
  }
  return positions;
}
