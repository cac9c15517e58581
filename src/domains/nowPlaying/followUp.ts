import { inTransaction } from '../../lib/db.ts';
import { onShownArtChanged } from '../artwork/shown.ts';
import { upsertNowPlayingRow } from './feed.ts';
import { latestTrack } from './queries.ts';

// The follow-up `now-playing` frame (docs/now-playing.md#artwork-you-can-trust): when the art stored
// tracks show changes (src/domains/artwork/shown.ts), the station's row goes out again if the current
// track is one of them, inside the transaction that changed it when there is one.
onShownArtChanged(async (svc, station, observationIds, tx) => {
  const latest = await latestTrack(tx ? tx.trx : svc.db, station.id);
  if (!latest || !observationIds.has(latest.id)) return;
  if (tx) await upsertNowPlayingRow(tx, svc, station, latest);
  else await inTransaction(svc.db, (write) => upsertNowPlayingRow(write, svc, station, latest));
});
