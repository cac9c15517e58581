import { Type, type Static } from '../../http/schema.ts';

// The station setting `reminders: {enabled, body, bodySoon}` (docs/push.md#body-templates-the-station-setting-reminders).
// A PATCH replaces it; absent fields take their defaults. Registered in station.ts.

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

const Template = (description: string) => Type.String({ minLength: 1, maxLength: 1000, description });
const TEMPLATE_HELP = 'with {program}, {presenters}, {station}, {time} (station-local HH:mm) and {minutes}';

export const RemindersInput = Type.Object(
  {
    enabled: Type.Optional(Type.Boolean({ description: 'send reminders to the followers of programs and presenters (default true)' })),
    body: Type.Optional(Template(`the body when remindBeforeMinutes is 0, ${TEMPLATE_HELP}; default "${DEFAULT_REMINDERS.body}"`)),
    bodySoon: Type.Optional(Template(`the body otherwise, ${TEMPLATE_HELP}; default "${DEFAULT_REMINDERS.bodySoon}"`)),
  },
  {
    title: 'RemindersSettingInput',
    additionalProperties: false,
    description: 'A PATCH replaces the setting; absent fields take their defaults.',
  },
);
export type RemindersInput = Static<typeof RemindersInput>;

export const RemindersOut = Type.Object(
  { enabled: Type.Boolean(), body: Type.String(), bodySoon: Type.String() },
  { title: 'RemindersSetting' },
);

/** The stored block (possibly partial or null) with every field present. */
export const remindersFromStored = (stored: Partial<RemindersSetting> | null | undefined): RemindersSetting => ({
  enabled: stored?.enabled ?? DEFAULT_REMINDERS.enabled,
  body: stored?.body ?? DEFAULT_REMINDERS.body,
  bodySoon: stored?.bodySoon ?? DEFAULT_REMINDERS.bodySoon,
});
