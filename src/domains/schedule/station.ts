import { withoutCommitHook } from '../../lib/commitHooks.ts';
import { onStationChanged } from '../stations/changes.ts';
import { refreshOnAir } from './onair.ts';
import { writeScheduleRows } from './stationRows.ts';

// What the schedule does when a station changes (docs/architecture.md, "A feature's station setting"):
// - a created station gets its `schedule` and `on-air` feed rows at once (docs/realtime.md#what-arrives:
//   every station's feed holds them from its creation). Outside the request's audit hook: the audit entry
//   belongs to the station's own write, not to this follow-up transaction.
// - the on-air feed row carries `upNext` only while the setting is on, so it is rebuilt when that changes.
onStationChanged('schedule feed rows of a new station', (svc, { before, after }) =>
  before === null ? withoutCommitHook(() => writeScheduleRows(svc, after.id)) : undefined,
);
onStationChanged('schedule on-air upNext', (svc, { before, after, changed }) =>
  before !== null && changed.has('upNext') ? refreshOnAir(svc, after.id) : undefined,
);
