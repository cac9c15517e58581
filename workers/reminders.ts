import type { JobPayload } from '../src/jobs.ts';
import type { Services } from '../src/services.ts';
import { fireDue, tick } from '../src/domains/reminders/fire.ts';

/** Every TICK_MS: late reminders at once, delayed `reminders.fire` jobs for the next minute's (src/domains/reminders/fire.ts). */
export const remindersTick = (_payload: JobPayload<'reminders.tick'>, svc: Services) => tick(svc);

/** A due instant of a station: re-reads the schedule and the follows, fires what is due now. */
export const remindersFire = async (payload: JobPayload<'reminders.fire'>, svc: Services) => ({
  fired: (await fireDue(svc, payload.stationId)).length,
});
