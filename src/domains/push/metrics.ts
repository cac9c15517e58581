import { counter } from '../../lib/metrics.ts';

// Push's metric (docs/operations.md, "Metrics"; docs/push.md), listed in src/roles/metrics.ts.

export const pushMessages = counter({
  name: 'waveline_push_messages_total',
  help: 'Push messages by provider and result: sent, failed, pruned (dead token removed), retried (429/5xx, sent again).',
  labelNames: ['provider', 'result'] as const,
});
