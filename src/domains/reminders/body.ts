import { DateTime } from 'luxon';
import type { RemindersSetting } from './setting.ts';

// A reminder's title and body (docs/push.md#body-templates-the-station-setting-reminders): the title is the program's
// title; the body is `reminders.body` when it is due at the start, `reminders.bodySoon` otherwise.

export interface ReminderFacts {
  program: string;
  presenters: string[];
  station: string;
  timezone: string;
  startsAt: Date;
  /** remindBeforeMinutes of the follows this reminder is due for. */
  minutes: number;
}

const PLACEHOLDER = /\{(program|presenters|station|time|minutes)\}/g;

/** Fills `{program}`, `{presenters}` (", "), `{station}`, `{time}` (station-local HH:mm), `{minutes}`; other braces stay. */
export function fillTemplate(template: string, facts: ReminderFacts): string {
  const values: Record<string, string> = {
    program: facts.program,
    presenters: facts.presenters.join(', '),
    station: facts.station,
    time: DateTime.fromJSDate(facts.startsAt, { zone: facts.timezone }).toFormat('HH:mm'),
    minutes: String(facts.minutes),
  };
  return template.replace(PLACEHOLDER, (_, key: string) => values[key]);
}

export function reminderText(setting: RemindersSetting, facts: ReminderFacts): { title: string; body: string } {
  const template = facts.minutes === 0 ? setting.body : setting.bodySoon;
  // A notification body is at most 1000 characters (docs/push.md#sending).
  return { title: facts.program.slice(0, 200), body: fillTemplate(template, facts).slice(0, 1000) };
}
