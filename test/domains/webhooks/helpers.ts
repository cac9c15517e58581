import { createHmac } from 'node:crypto';
import { eventually } from '../../support/factories.ts';
import { expect } from 'chai';
import { admin } from '../../support/http.ts';
import type { Received } from '../../support/receiver.ts';

export const ALL_EVENTS = [
  'now-playing.changed',
  'broadcast.started',
  'broadcast.ended',
  'schedule.changed',
  'content.published',
  'content.unpublished',
];

export async function createHook(
  baseUrl: string,
  stationId: string,
  url: string,
  events: string[] = ALL_EVENTS,
): Promise<{ id: string; secret: string }> {
  const res = await admin(baseUrl, 'POST', `/stations/${stationId}/webhooks`, { url, events });
  expect(res.status, JSON.stringify(res.body)).to.equal(201);
  return res.body;
}

/**
 * The signatures of a delivery that verify with `secret` (docs/webhooks.md#verifying-a-signature: base64
 * HMAC-SHA256 of "id.timestamp.body" keyed with the decoded secret).
 */
export function verifyingSignatures(secret: string, delivery: Received): number {
  const id = String(delivery.headers['webhook-id']);
  const timestamp = String(delivery.headers['webhook-timestamp']);
  const expected = createHmac('sha256', Buffer.from(secret.slice('whsec_'.length), 'base64'))
    .update(`${id}.${timestamp}.${delivery.body}`)
    .digest('base64');
  return String(delivery.headers['webhook-signature'])
    .split(' ')
    .filter((s) => s === `v1,${expected}`).length;
}

export async function deliveries(baseUrl: string, stationId: string, webhookId: string, query = ''): Promise<any[]> {
  const res = await admin(baseUrl, 'GET', `/stations/${stationId}/webhooks/${webhookId}/deliveries${query}`);
  expect(res.status, JSON.stringify(res.body)).to.equal(200);
  return res.body.deliveries;
}

/** Waits until `list()` holds at least `n` items (with a deadline) and returns them. */
export async function arrived<T>(list: () => T[] | Promise<T[]>, n = 1, timeoutMs = 5000): Promise<T[]> {
  let items: T[] = [];
  await eventually(async () => (items = await list()).length >= n, { timeoutMs });
  return items;
}
