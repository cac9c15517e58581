import { createHash } from 'node:crypto';
import { ValidationError } from '../../lib/errors.ts';
import type { ObservationInput } from './model.ts';
import type { IngestBody } from './schemas.ts';

// Turns a schema-valid ingest body into one observation: the `duration` alias merged, `streamTitle`
// split, `isPlaying` defaulted, and the cross-field rules of docs/now-playing.md#body-fields checked.

const STREAM_SEPARATOR = ' - ';
const PART_MAX = 500;

function fieldError(path: string, message: string): ValidationError {
  return new ValidationError('Invalid request body.', [{ path, code: 'invalid_value', message }]);
}

/** `Artist - Title` splits at the first ` - `; without it the whole string is the title and artist is null. */
export function splitStreamTitle(streamTitle: string): { artist: string | null; title: string } {
  const at = streamTitle.indexOf(STREAM_SEPARATOR);
  let artist: string | null = null;
  let title = streamTitle.trim();
  if (at >= 0) {
    const left = streamTitle.slice(0, at).trim();
    const right = streamTitle.slice(at + STREAM_SEPARATOR.length).trim();
    // "Artist - " or " - Title": keep the side that is there as the title rather than store an empty one.
    artist = left && right ? left : null;
    title = right || left;
  }
  if (!title) throw fieldError('streamTitle', 'streamTitle must contain a title');
  if (title.length > PART_MAX) throw fieldError('streamTitle', `streamTitle title part must be at most ${PART_MAX} characters`);
  if (artist && artist.length > PART_MAX) throw fieldError('streamTitle', `streamTitle artist part must be at most ${PART_MAX} characters`);
  return { artist, title };
}

const ISRC = /^[A-Z]{2}[A-Z0-9]{3}[0-9]{7}$/;

/** An ISRC as reporting agencies want it: hyphens removed, upper case, checked against the 12-character form. */
export function normaliseIsrc(raw: string): string {
  const isrc = raw.replace(/-/g, '').toUpperCase();
  if (!ISRC.test(isrc))
    throw fieldError('isrc', 'isrc must be an ISRC: 12 characters CCXXXYYNNNNN (hyphens allowed), e.g. US-RC1-76-07839');
  return isrc;
}

export function bindObservation(body: IngestBody): ObservationInput {
  if (body.duration !== undefined && body.durationSeconds !== undefined && body.duration !== body.durationSeconds) {
    throw fieldError('duration', 'duration must equal durationSeconds when both are sent');
  }
  const isPlaying = body.isPlaying ?? true;
  let artist: string | null = null;
  let title: string | null = null;
  if (body.artist !== undefined && body.title !== undefined) {
    artist = body.artist;
    title = body.title;
  } else if (body.streamTitle !== undefined) {
    // A lone artist or title next to streamTitle overrides that part of the split.
    const split = splitStreamTitle(body.streamTitle);
    artist = body.artist ?? split.artist;
    title = body.title ?? split.title;
  } else if (body.artist !== undefined || body.title !== undefined) {
    const missing = body.artist === undefined ? 'artist' : 'title';
    throw fieldError(missing, `${missing} is required when ${missing === 'artist' ? 'title' : 'artist'} is sent (or send streamTitle)`);
  } else if (isPlaying) {
    throw fieldError('title', 'title is required: send artist and title, or streamTitle (a body without a track needs isPlaying false)');
  }
  return {
    eventId: body.eventId ?? null,
    observedAt: body.observedAt !== undefined ? new Date(body.observedAt) : null,
    artist,
    title,
    album: body.album ?? null,
    durationSeconds: body.durationSeconds ?? body.duration ?? null,
    artworkUrl: body.artworkUrl ?? null,
    sourceTrackId: body.sourceTrackId ?? null,
    isrc: body.isrc !== undefined ? normaliseIsrc(body.isrc) : null,
    isPlaying,
  };
}

/**
 * The payload's identity for eventId retries: the bound observation, so a retry that sends `duration`
 * instead of `durationSeconds`, or `streamTitle` instead of its parts, is still the same payload.
 */
export function fingerprintOf(input: ObservationInput): string {
  const canonical = JSON.stringify([
    input.eventId,
    input.observedAt ? input.observedAt.getTime() : null,
    input.artist,
    input.title,
    input.album,
    input.durationSeconds,
    input.artworkUrl,
    input.sourceTrackId,
    input.isPlaying,
    // Appended only when sent, so retries of observations stored before ISRCs existed keep their identity.
    ...(input.isrc !== null ? [input.isrc] : []),
  ]);
  return createHash('sha256').update(canonical).digest('hex');
}
