import { counter } from '../../lib/metrics.ts';

// The listener inbox's metrics (docs/operations.md, "Metrics"), listed in src/roles/metrics.ts.

/** Messages stored, by kind and the status they were stored with (`pending`, `held`, `hidden`). */
export const inboxMessages = counter({
  name: 'waveline_inbox_messages_total',
  help: 'Listener inbox messages stored, by kind and the status they were stored with.',
  labelNames: ['kind', 'status'] as const,
});

/** Messages refused: the request policy's reasons, and the per-client and per-address limits. */
export const inboxRefused = counter({
  name: 'waveline_inbox_refused_total',
  help: 'Listener inbox messages refused, by reason (request policy, client or address limit).',
  labelNames: ['reason'] as const,
});
