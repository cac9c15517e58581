import type { Job } from 'bullmq';
import type { JobName, JobPayload } from '../src/jobs.ts';
import type { Services } from '../src/services.ts';
import { healthPing } from './health.ts';
import { scheduleMidnight } from './scheduleMidnight.ts';
import { scheduleBoundary } from './scheduleBoundary.ts';
import { scheduleSweep } from './scheduleSweep.ts';
import { mediaRefresh } from './mediaRefresh.ts';
import { mediaSweep } from './mediaSweep.ts';
import { mediaVariants } from './mediaVariants.ts';
import { radiodnsLogos } from './radiodnsLogos.ts';
import { feedsPoll } from './feedsPoll.ts';
import { nowPlayingFollow } from './nowPlayingFollow.ts';
import { artworkCheck, artworkLookup, artworkResolve } from './artwork.ts';
import { webhooksDeliver } from './webhooksDeliver.ts';
import { feedPrune } from './feedPrune.ts';
import { auditPrune } from './auditPrune.ts';
import { audienceFix, audiencePoll, audiencePrune } from './audience.ts';
import { pushReceipts, pushSend, pushSweep } from './push.ts';
import { remindersFire, remindersTick } from './reminders.ts';
import { inboxPrune } from './inboxPrune.ts';

/**
 * A job's handler. `answer` (awaited jobs only) tells a waiting request the job's result before the
 * handler has finished: what the job does after it (`nowPlaying.follow` resolving the track's art)
 * no longer delays the request. The return value is answered when `answer` was not called.
 */
export type JobHandler<N extends JobName> = (
  payload: JobPayload<N>,
  svc: Services,
  job: Job,
  answer: (value: unknown) => Promise<void>,
) => Promise<unknown>;

/** Every job name and its handler, listed explicitly (never discovered from file names). */
export const registry: { [N in JobName]: JobHandler<N> } = {
  'health.ping': healthPing,
  'schedule.midnight': scheduleMidnight,
  'schedule.boundary': scheduleBoundary,
  'schedule.sweep': scheduleSweep,
  'media.variants': mediaVariants,
  'media.refresh': mediaRefresh,
  'media.sweep': mediaSweep,
  'radiodns.logos': radiodnsLogos,
  'feeds.poll': feedsPoll,
  'nowPlaying.follow': nowPlayingFollow,
  'nowPlaying.artwork': artworkLookup,
  'artwork.resolve': artworkResolve,
  'artwork.check': artworkCheck,
  'webhooks.deliver': webhooksDeliver,
  'webhooks.retry': webhooksDeliver,
  'feed.prune': feedPrune,
  'audit.prune': auditPrune,
  'audience.poll': audiencePoll,
  'audience.fix': audienceFix,
  'audience.prune': audiencePrune,
  'push.send': pushSend,
  'push.receipts': pushReceipts,
  'push.sweep': pushSweep,
  'reminders.tick': remindersTick,
  'reminders.fire': remindersFire,
  'inbox.prune': inboxPrune,
};
