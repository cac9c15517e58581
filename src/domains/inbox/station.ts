import { Type } from '../../http/schema.ts';
import { registerPlayColumns } from '../nowPlaying/playColumns.ts';
import { registerStationModule, registerStationSetting } from '../stations/settings.ts';
import { checkInbox, InboxInput, InboxOut, inboxFromStored, type InboxSetting } from './setting.ts';
import { voteCounts } from './votes.ts';

// How the listener inbox plugs into the station (docs/architecture.md, "A feature's station setting"):
// the module `inbox` (off unless switched on), the `inbox` setting (stored in `stations.inbox`) and the
// play log's `likes` and `dislikes` columns. Registered by src/features.ts before the station schemas
// and the play-log route are built.

declare module '../stations/model.ts' {
  interface FeatureModules {
    /** The listener inbox's routes (docs/inbox.md). */
    inbox: true;
  }
  interface StationSettings {
    /** The listener inbox's parts, policy and limits (docs/inbox.md, "Station setting"); every key present. */
    inbox: InboxSetting;
  }
}

registerStationModule({ key: 'inbox', default: false });

registerStationSetting({
  key: 'inbox',
  column: 'inbox',
  input: InboxInput,
  output: InboxOut,
  // The sent fields are merged into what is stored.
  patch: 'merge',
  fromStored: inboxFromStored,
  fromInput: (input, base) => inboxFromStored({ ...base, ...input }),
  check: (setting) => checkInbox(setting),
});

registerPlayColumns({
  columns: ['likes', 'dislikes'],
  schema: {
    likes: Type.Integer({ description: 'listeners’ likes of the play (docs/inbox.md, "Likes")' }),
    dislikes: Type.Integer({ description: 'listeners’ dislikes of the play' }),
  },
  empty: { likes: 0, dislikes: 0 },
  values: (db, stationId, playIds) => voteCounts(db, stationId, playIds),
});
