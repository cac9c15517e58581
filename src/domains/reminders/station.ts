import { registerStationSetting } from '../stations/settings.ts';
import { RemindersInput, RemindersOut, remindersFromStored, type RemindersSetting } from './setting.ts';

// How reminders plug into the station (docs/architecture.md, "A feature's station setting"): the
// `reminders` setting, stored in the `stations.reminders` column. An import bundle carries it as the
// POST body does. Registered by src/features.ts before the station schemas are built.

declare module '../stations/model.ts' {
  interface StationSettings {
    /** Reminders of followed programs and presenters (docs/push.md#follows-and-reminders); every key present. */
    reminders: RemindersSetting;
  }
}

registerStationSetting({
  key: 'reminders',
  column: 'reminders',
  input: RemindersInput,
  output: RemindersOut,
  // A PATCH replaces the setting; absent fields take their defaults.
  patch: 'replace',
  fromStored: remindersFromStored,
  fromInput: (input) => remindersFromStored(input),
});
