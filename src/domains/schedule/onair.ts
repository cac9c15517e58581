import type { Services } from '../../services.ts';

/**
 * Recomputes the station's `on-air` feed row (decisions.md, "Realtime feed": broadcast, planned
 * position, last followed observation) and upserts it. Called by the schedule jobs at broadcast and
 * rundown-item boundaries and by rundown following after a match.
 *
 * PLACEHOLDER until the schedule issue lands its implementation here (same signature).
 */
export async function refreshOnAir(_svc: Services, _stationId: string): Promise<void> {}
