import { nextAgeTick } from '../../lib/freshness.ts';
import { JSON_TYPE, Representation } from '../../lib/readCache.ts';
import type { Services } from '../../services.ts';
import type { Station } from '../stations/model.ts';
import type { Feed } from './model.ts';
import { trafficJson, weatherJson } from './presenter.ts';
import { findStoredSnapshot } from './queries.ts';

// The weather and traffic listener reads as cached answers, shared by REST and GraphQL.

/** The stored snapshot wrapped with freshness at this moment: exact until the age moves to the next whole second. */
export async function feedRead(svc: Pick<Services, 'db' | 'clock'>, station: Station, feed: Feed): Promise<Representation> {
  const now = svc.clock.now();
  const stored = await findStoredSnapshot(svc.db, feed, station.id);
  const basis = stored ? (stored.observedAt ?? stored.receivedAt) : null;
  const validUntil = basis ? nextAgeTick(basis.getTime(), now.getTime()) : Infinity;
  const json = feed === 'weather' ? weatherJson(station.timezone, stored, now) : trafficJson(station.timezone, stored, now);
  return new Representation(Buffer.from(json), JSON_TYPE, validUntil);
}
