import { withoutCommitHook } from '../../lib/commitHooks.ts';
import { onStationChanged } from '../stations/changes.ts';
import { writeNowPlayingRow } from './stationRows.ts';

// What now-playing does when a station changes (docs/architecture.md, "A feature's station setting"): a
// created station gets its `now-playing` feed row at once (track null, freshness `empty`;
// docs/realtime.md#what-arrives). Outside the request's audit hook: the audit entry belongs to the station's own write.
onStationChanged('now-playing feed row of a new station', (svc, { before, after }) =>
  before === null ? withoutCommitHook(() => writeNowPlayingRow(svc, after)) : undefined,
);
