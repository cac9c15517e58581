import { gauge } from '../../lib/metrics.ts';

// The audience feature's metric (docs/operations.md, "Metrics"), listed in src/roles/metrics.ts.

/**
 * Listeners of each stream at its last good poll (docs/audience.md, "The poller"). A stream whose last
 * poll failed has no series until it answers again: an unknown count is never shown as 0.
 */
export const streamListeners = gauge({
  name: 'waveline_stream_listeners',
  help: 'Listeners of a station stream at its last good poll (station id, stream key).',
  labelNames: ['station', 'stream'] as const,
});
