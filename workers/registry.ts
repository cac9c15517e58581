import type { Job } from 'bullmq';
import type { JobName, JobPayload } from '../src/jobs.ts';
import type { Services } from '../src/services.ts';
import { healthPing } from './health.ts';
import { nowPlayingFollow } from './nowPlayingFollow.ts';
import { nowPlayingArtwork } from './nowPlayingArtwork.ts';

export type JobHandler<N extends JobName> = (payload: JobPayload<N>, svc: Services, job: Job) => Promise<unknown>;

/** Every job name and its handler, listed explicitly (never discovered from file names). */
export const registry: { [N in JobName]: JobHandler<N> } = {
  'health.ping': healthPing,
  'nowPlaying.follow': nowPlayingFollow,
  'nowPlaying.artwork': nowPlayingArtwork,
};
