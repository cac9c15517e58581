import type { Job } from 'bullmq';
import type { JobPayload } from '../src/jobs.ts';
import type { Services } from '../src/services.ts';
import { deliverWebhook } from '../src/domains/webhooks/deliver.ts';

/** One delivery attempt of a webhook event (src/domains/webhooks/deliver.ts); retries are jobs of their own. */
export async function webhooksDeliver(
  payload: JobPayload<'webhooks.deliver' | 'webhooks.retry'>,
  svc: Services,
  job: Job,
): Promise<unknown> {
  return deliverWebhook(svc, payload, job.name === 'webhooks.retry' ? 'slow' : 'fast');
}
