import { onStationChanged } from '../stations/changes.ts';
import { refreshOnAir } from './onair.ts';

// What the schedule does when a station changes (docs/architecture.md, "A feature's station setting"):
// the on-air feed row carries `upNext` only while the setting is on, so it is rebuilt when that changes.
onStationChanged('schedule on-air upNext', (svc, { before, after, changed }) =>
  before !== null && changed.has('upNext') ? refreshOnAir(svc, after.id) : undefined,
);
