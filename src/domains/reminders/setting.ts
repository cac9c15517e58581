import type { Station } from '../stations/model.ts';

// The station setting `reminders: {enabled, body, bodySoon}` (decisions.md, "Follows and reminders").
// A PATCH replaces it; absent fields take their defaults.

export interface RemindersSetting {
  enabled: boolean;
  body: string;
  bodySoon: string;
}

export const DEFAULT_REMINDERS: Readonly<RemindersSetting> = Object.freeze({
  enabled: true,
  body: 'Starts now on {station}',
  bodySoon: 'Starts at {time} on {station}',
});

/** The station's setting with every field present (the defaults where it sets none). */
export function remindersOf(station: Station): RemindersSetting {
  const stored = (station as Station & { reminders?: Partial<RemindersSetting> | null }).reminders ?? {};
  return { ...DEFAULT_REMINDERS, ...stored };
}
