import { DateTime } from 'luxon';
import { inTransaction } from '../../lib/db.ts';
import { ValidationError } from '../../lib/errors.ts';
import type { Services } from '../../services.ts';
import type { Station } from '../stations/model.ts';
import { audienceStreams, PUSH_FUTURE_SKEW_MS, PUSH_WINDOW_MS, type Sample } from './model.ts';
import { recomputeTouched } from './performances.ts';
import { notePushedSamples, storeSamples } from './samples.ts';
import type { PushSamplesBody } from './schemas.ts';

// Pushed listener counts (docs/audience.md#hls-a-cdn-or-anything-else-push-the-counts): for HLS and CDNs that
// count sessions themselves. The batch is checked whole before anything is stored, so a refused batch stores
// nothing; the samples and the recomputed figures of the fixed plays they touch are written in one
// transaction.

// Paths as the schema's own errors name them (`samples.1.listeners`): the sample's index from 0, then the field.
const refuse = (index: number, field: string, message: string) =>
  new ValidationError('Invalid listener samples.', [
    { path: `samples.${index}.${field}`, code: 'invalid_value', message: `samples.${index}.${field} ${message}` },
  ]);

function instantOf(raw: string | number, index: number): Date {
  if (typeof raw === 'number') return new Date(raw);
  const parsed = DateTime.fromISO(raw, { setZone: true });
  if (!parsed.isValid || !/(Z|[+-]\d{2}:?\d{2})$/i.test(raw))
    throw refuse(index, 'at', 'must be an ISO 8601 timestamp with a time zone (Z or ±hh:mm) or Unix milliseconds');
  return parsed.toJSDate();
}

export async function acceptSamples(
  svc: Pick<Services, 'db' | 'clock' | 'config'>,
  station: Station,
  rawStreams: unknown,
  body: PushSamplesBody,
): Promise<{ accepted: number }> {
  const streams = audienceStreams(rawStreams);
  const keys = streams.map((s) => s.key);
  const now = svc.clock.now();
  const byKey = new Map<string, Sample>();
  body.samples.forEach((entry, i) => {
    if (!keys.includes(entry.stream))
      throw refuse(
        i,
        'stream',
        keys.length
          ? `must be a key of one of the station’s streams: ${keys.join(', ')} (got "${entry.stream}")`
          : `cannot be used: the station lists no streams (got "${entry.stream}")`,
      );
    const at = instantOf(entry.at, i);
    if (at.getTime() > now.getTime() + PUSH_FUTURE_SKEW_MS) throw refuse(i, 'at', 'is in the future');
    if (at.getTime() < now.getTime() - PUSH_WINDOW_MS) throw refuse(i, 'at', 'is more than 24 hours ago');
    // The same (stream, at) twice in one batch: the later entry wins, as a later batch would.
    byKey.set(`${entry.stream}\u0000${at.getTime()}`, {
      stationId: station.id,
      streamKey: entry.stream,
      at,
      listeners: entry.listeners,
      source: 'push',
    });
  });
  const samples = [...byKey.values()];
  const latest = new Map<string, Date>();
  for (const s of samples) if (!latest.has(s.streamKey) || latest.get(s.streamKey)! < s.at) latest.set(s.streamKey, s.at);
  await inTransaction(svc.db, async ({ trx }) => {
    await storeSamples(trx, samples);
    await notePushedSamples(trx, station.id, latest);
    await recomputeTouched(trx, station.id, streams, samples, svc.config.audience.pollSeconds, now);
  });
  return { accepted: body.samples.length };
}
