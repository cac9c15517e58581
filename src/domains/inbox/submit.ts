import type { Knex } from 'knex';
import { ModuleDisabledError, RateLimitedError, RequestRefusedError, ValidationError } from '../../lib/errors.ts';
import { inTransaction } from '../../lib/db.ts';
import { newId } from '../../lib/ids.ts';
import { metricsEnabled } from '../../lib/metrics.ts';
import type { Services } from '../../services.ts';
import type { Station } from '../stations/model.ts';
import { emitAfterCommit } from '../webhooks/emit.ts';
import { catchUpCatalogue, trackKey, verdicts, type TrackKey } from './catalogue.ts';
import { addressHash, clientIdentity } from './identity.ts';
import { inboxMessages, inboxRefused } from './metrics.ts';
import { HOUR_MS, listenerStatus, PER_ADDRESS_PER_HOUR, REPEAT_WINDOW_MS, type MessageRow, type MessageStatus } from './model.ts';
import { announce, NEXT_POSITION_CTE } from './positions.ts';
import { presentMessage } from './presenter.ts';
import type { PostMessageBody } from './schemas.ts';
import { needsReview } from './text.ts';

// A listener's message, dedication or song request (docs/inbox.md, "Sending"), decided in this order:
// the part open → the input complete → the same message again within 10 minutes (the first's answer,
// nothing stored) → the client's and the address's hourly limits (429) → the request policy (409) →
// stored: `hidden` from a banned client or address, `held` with a blocked word or a link, else `pending`.
// The checks and the write run in one transaction holding the client's, the address's and (for a
// request) the track's locks, so two sends at once are decided one after the other.

type SubmitServices = Pick<Services, 'db' | 'config' | 'clock' | 'invalidation' | 'webhooks' | 'jobs' | 'logger'>;

const codePoints = (text: string): number => {
  let n = 0;
  for (const _ of text) n++;
  return n;
};

function checkInput(station: Station, body: PostMessageBody): void {
  const setting = station.inbox;
  if (body.kind === 'request' ? !setting.requests : !setting.messages)
    throw new ModuleDisabledError(body.kind === 'request' ? 'inbox requests' : 'inbox messages');
  if (body.kind === 'request' && body.track === undefined)
    throw new ValidationError('Invalid body.', [{ path: 'track', code: 'required', message: 'a request needs `track` ({artist, title})' }]);
  if (body.kind !== 'request' && body.text === undefined)
    throw new ValidationError('Invalid body.', [{ path: 'text', code: 'required', message: `a ${body.kind} needs \`text\`` }]);
  if (body.text !== undefined && codePoints(body.text) > setting.maxLength)
    throw new ValidationError('Invalid body.', [
      { path: 'text', code: 'too_big', message: `text may hold at most ${setting.maxLength} characters at this station` },
    ]);
}

/** Seconds until the oldest of the last `limit` sends (newest first) leaves the hour, when there are that many. */
function overLimit(times: Date[], limit: number, now: Date): number | null {
  if (times.length < limit) return null;
  return Math.max(1, Math.ceil((new Date(times[limit - 1]).getTime() + HOUR_MS - now.getTime()) / 1000));
}

interface SendContext {
  repeat: { id: string; status: MessageStatus } | null;
  client_times: Date[] | null;
  address_times: Date[] | null;
  banned: boolean;
}

async function sendContext(trx: Knex.Transaction, row: Omit<MessageRow, 'seq'>, now: Date): Promise<SendContext> {
  const hourAgo = new Date(now.getTime() - HOUR_MS);
  const { rows } = await trx.raw<{ rows: SendContext[] }>(
    `SELECT
       (SELECT json_build_object('id', id, 'status', status) FROM inbox_messages
         WHERE station_id = ? AND client_hash = ? AND created_at > ? AND kind = ?
           AND text IS NOT DISTINCT FROM ? AND artist_key IS NOT DISTINCT FROM ? AND title_key IS NOT DISTINCT FROM ?
         ORDER BY created_at DESC LIMIT 1) AS repeat,
       (SELECT array_agg(created_at ORDER BY created_at DESC) FROM inbox_messages
         WHERE station_id = ? AND client_hash = ? AND created_at > ?) AS client_times,
       (SELECT array_agg(created_at ORDER BY created_at DESC) FROM inbox_messages
         WHERE station_id = ? AND address_hash = ? AND created_at > ?) AS address_times,
       EXISTS (SELECT 1 FROM inbox_bans
         WHERE station_id = ? AND (client_hash = ? OR address_hash = ?) AND (expires_at IS NULL OR expires_at > ?)) AS banned`,
    [
      row.station_id,
      row.client_hash,
      new Date(now.getTime() - REPEAT_WINDOW_MS),
      row.kind,
      row.text,
      row.artist_key,
      row.title_key,
      row.station_id,
      row.client_hash,
      hourAgo,
      row.station_id,
      row.address_hash,
      hourAgo,
      row.station_id,
      row.client_hash,
      row.address_hash,
      now,
    ],
  );
  return rows[0];
}

/** Stores a message with the station's next stream position (positions.ts). */
async function insertMessage(trx: Knex.Transaction, row: Omit<MessageRow, 'seq'>): Promise<MessageRow> {
  const columns = Object.keys(row);
  const { rows } = await trx.raw<{ rows: MessageRow[] }>(
    `WITH ${NEXT_POSITION_CTE}
     INSERT INTO inbox_messages (${columns.join(', ')}, seq)
     SELECT ${columns.map(() => '?').join(', ')}, next_position.seq FROM next_position
     RETURNING *`,
    [row.station_id, ...Object.values(row)],
  );
  return rows[0];
}

const lockKeys = (trx: Knex.Transaction, keys: string[]) =>
  trx.raw(`SELECT ${keys.map(() => 'pg_advisory_xact_lock(hashtextextended(?, 0))').join(', ')}`, keys);

function refuse(reason: string, err: Error): never {
  if (metricsEnabled()) inboxRefused.labels(reason).inc();
  throw err;
}

const REFUSAL_MESSAGES = {
  'recently-played': 'This track was played too recently to be requested.',
  'artist-recently-played': 'This artist was played too recently to be requested.',
  'already-requested': 'This track has already been requested.',
} as const;

/** Decides and stores a listener's message; answers what the listener is told: `{id, status}`. */
export async function submitMessage(
  svc: SubmitServices,
  station: Station,
  body: PostMessageBody,
  address: string,
): Promise<{ id: string; status: MessageStatus }> {
  checkInput(station, body);
  const setting = station.inbox;
  const now = svc.clock.now();
  const { clientHash, client } = clientIdentity(svc.config.secret, station.id, body.clientId);
  const track: TrackKey | null = body.track ? trackKey(body.track.artist, body.track.title) : null;
  const row: Omit<MessageRow, 'seq'> = {
    id: newId(),
    station_id: station.id,
    kind: body.kind,
    text: body.text ?? null,
    name: body.name ?? null,
    location: body.location ?? null,
    track_artist: body.track?.artist ?? null,
    track_title: body.track?.title ?? null,
    artist_key: track?.artistKey ?? null,
    title_key: track?.titleKey ?? null,
    status: 'pending',
    client_hash: clientHash,
    client,
    address_hash: addressHash(svc.config.secret, station.id, address),
    created_at: now,
    updated_at: now,
  };
  if (body.kind === 'request') await catchUpCatalogue(svc.db, station.id, now);
  const stored = await inTransaction(svc.db, async (tx) => {
    const locks = [`inbox:client:${station.id}:${clientHash}`, `inbox:address:${station.id}:${row.address_hash}`];
    if (body.kind === 'request' && track) locks.push(`inbox:track:${station.id}:${track.artistKey}\u0001${track.titleKey}`);
    await lockKeys(tx.trx, locks);
    const context = await sendContext(tx.trx, row, now);
    if (context.repeat) return { id: context.repeat.id, status: context.repeat.status, created: null };
    const clientWait = overLimit(context.client_times ?? [], setting.perClientPerHour, now);
    if (clientWait !== null) refuse('client-limit', new RateLimitedError(clientWait));
    const addressWait = overLimit(context.address_times ?? [], PER_ADDRESS_PER_HOUR, now);
    if (addressWait !== null) refuse('address-limit', new RateLimitedError(addressWait));
    if (body.kind === 'request' && track) {
      const [verdict] = await verdicts(tx.trx, station.id, setting, [track], now);
      if (!verdict.requestable && verdict.reason)
        refuse(verdict.reason, new RequestRefusedError(REFUSAL_MESSAGES[verdict.reason], verdict.reason, verdict.retryAfterSeconds));
    }
    row.status = context.banned ? 'hidden' : needsReview(setting, [row.text, row.name, row.location]) ? 'held' : 'pending';
    const created = await insertMessage(tx.trx, row);
    tx.afterCommit(() => announce(svc, station.id));
    if (created.status === 'pending') emitAfterCommit(tx, svc, station.id, 'inbox.message', () => presentMessage(created));
    return { id: created.id, status: created.status, created };
  });
  if (stored.created && metricsEnabled()) inboxMessages.labels(stored.created.kind, stored.created.status).inc();
  return { id: stored.id, status: listenerStatus(stored.status) };
}
