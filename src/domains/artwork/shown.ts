import type { Tx } from '../../lib/db.ts';
import type { Services } from '../../services.ts';
import type { Station } from '../stations/model.ts';

// When what listeners see of stored tracks' art may have changed (a check kept an image, a pin, a
// block, a catalogue find), the features that show those tracks hear of it: now-playing sends the
// station's row again when the current track is among them, the follow-up frame (nowPlaying/followUp.ts).
// Artwork names none of them: each subscribes from a file in its own folder, listed in src/features.ts.

/**
 * `tx` is the transaction that wrote the change, when it is still open (what the listener writes goes
 * with it); null once it committed.
 */
export type ShownArtListener = (svc: Services, station: Station, observationIds: ReadonlySet<string>, tx: Tx | null) => Promise<void>;

const listeners: ShownArtListener[] = [];

/** Subscribes `listener` to every change of the art stored tracks show, in registration order. */
export function onShownArtChanged(listener: ShownArtListener): void {
  listeners.push(listener);
}

/** Tells every listener that the art of `observationIds` (tracks of `station`) may show differently now. */
export async function shownArtChanged(
  svc: Services,
  station: Station,
  observationIds: ReadonlySet<string>,
  tx: Tx | null = null,
): Promise<void> {
  for (const listener of listeners) await listener(svc, station, observationIds, tx);
}
