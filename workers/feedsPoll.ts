import type { JobPayload } from '../src/jobs.ts';
import type { Services } from '../src/services.ts';
import { pollFeed, type PollResult } from '../src/domains/weather/poll.ts';

/** The repeatable weather/traffic poll of one station (scheduled by `PUT /admin/v1/stations/{id}/{feed}/source`). */
export async function feedsPoll(payload: JobPayload<'feeds.poll'>, svc: Services): Promise<PollResult> {
  return pollFeed(svc, payload.stationId, payload.feed);
}
