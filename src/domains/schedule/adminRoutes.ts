import { adminErrorResponses, adminWrite } from '../../http/responses.ts';
import { defineRoute } from '../../http/route.ts';
import { ErrorBody } from '../../http/schema.ts';
import { inTransaction, type Tx } from '../../lib/db.ts';
import {
  removeBroadcast,
  removePresenter,
  removeProgram,
  saveBroadcast,
  savePresenter,
  saveProgram,
  scheduleChanged,
  stationForWrite,
} from './commands.ts';
import { saveRundown } from './rundown.ts';
import { broadcastById } from './queries.ts';
import { scheduleChangedEvent } from './webhookEvents.ts';
import type { BroadcastRow } from './model.ts';
import { presentAdminBroadcast, presentAdminPresenter, presentAdminProgram, presentAdminRundown } from './presenter.ts';
import {
  AdminBroadcast,
  AdminPresenter,
  AdminProgram,
  AdminRundown,
  BroadcastBody,
  BroadcastParams,
  PresenterBody,
  PresenterParams,
  ProgramBody,
  ProgramParams,
  RundownBody,
} from './schemas.ts';

// Admin writes (docs/schedule.md#admin-api): idempotent PUTs named by id, 200 with the stored object.
// Each write and the feed rows it changes commit together; timers are re-planned after commit.

const adminErrors = adminErrorResponses('Station (or broadcast) not found.', {
  409: { description: 'The id belongs to another station.', schema: ErrorBody },
});

const admin = adminWrite;

/** Where a broadcast lay before a write (for the `schedule.changed` webhook event's dates). */
const broadcastSpan = (tx: Tx, stationId: string, id: string) =>
  tx.trx<BroadcastRow>('broadcasts').where({ id, station_id: stationId }).first('starts_at', 'ends_at');

export const scheduleAdminRoutes = [
  defineRoute({
    ...admin,
    method: 'put',
    path: '/admin/v1/stations/{stationId}/presenters/{presenterId}',
    operationId: 'adminPutPresenter',
    access: { scope: 'schedule:write', action: 'schedule.presenter-save' },
    summary: 'Create or replace a presenter',
    params: PresenterParams,
    body: PresenterBody,
    responses: { 200: { description: 'The stored presenter.', schema: AdminPresenter }, ...adminErrors },
    async handler({ svc, params, body }) {
      return inTransaction(svc.db, async (tx) => {
        const station = await stationForWrite(tx, params.stationId);
        const row = await savePresenter(tx, params.stationId, params.presenterId, body, svc.clock.now());
        // Presenter names show in broadcasts; times do not move, so no re-plan.
        await scheduleChanged(tx, svc, params.stationId, station.timezone, { replan: false });
        return presentAdminPresenter(row);
      });
    },
  }),
  defineRoute({
    ...admin,
    method: 'put',
    path: '/admin/v1/stations/{stationId}/programs/{programId}',
    operationId: 'adminPutProgram',
    access: { scope: 'schedule:write', action: 'schedule.program-save' },
    summary: 'Create or replace a program with its presenters and weekly slots',
    params: ProgramParams,
    body: ProgramBody,
    responses: { 200: { description: 'The stored program.', schema: AdminProgram }, ...adminErrors },
    async handler({ svc, params, body }) {
      return inTransaction(svc.db, async (tx) => {
        const station = await stationForWrite(tx, params.stationId);
        const program = await saveProgram(tx, params.stationId, params.programId, body, svc.clock.now());
        await scheduleChanged(tx, svc, params.stationId, station.timezone, { replan: false });
        return presentAdminProgram(program);
      });
    },
  }),
  defineRoute({
    ...admin,
    method: 'delete',
    path: '/admin/v1/stations/{stationId}/presenters/{presenterId}',
    operationId: 'adminDeletePresenter',
    access: { scope: 'schedule:write', action: 'schedule.presenter-delete' },
    summary: 'Delete a presenter (204 also when it did not exist)',
    description: 'The presenter is also taken off every program’s and broadcast’s presenter list; devices following it stop following it.',
    params: PresenterParams,
    responses: { 204: { description: 'Deleted.' }, ...adminErrors },
    async handler({ ctx, svc, params }) {
      await inTransaction(svc.db, async (tx) => {
        const station = await stationForWrite(tx, params.stationId);
        // Presenter lists show in broadcasts; times do not move, so no re-plan.
        if (await removePresenter(tx, params.stationId, params.presenterId))
          await scheduleChanged(tx, svc, params.stationId, station.timezone, { replan: false });
      });
      ctx.status = 204;
    },
  }),
  defineRoute({
    ...admin,
    method: 'delete',
    path: '/admin/v1/stations/{stationId}/programs/{programId}',
    operationId: 'adminDeleteProgram',
    access: { scope: 'schedule:write', action: 'schedule.program-delete' },
    summary: 'Delete a program no broadcast references (204 also when it did not exist)',
    description: 'Its slots and presenter list go with it; devices following it stop following it.',
    params: ProgramParams,
    responses: {
      204: { description: 'Deleted.' },
      ...adminErrors,
      409: { description: 'PROGRAM_IN_USE: broadcasts still reference the program (the message names how many).', schema: ErrorBody },
    },
    async handler({ ctx, svc, params }) {
      await inTransaction(svc.db, async (tx) => {
        const station = await stationForWrite(tx, params.stationId);
        if (await removeProgram(tx, params.stationId, params.programId))
          await scheduleChanged(tx, svc, params.stationId, station.timezone, { replan: false });
      });
      ctx.status = 204;
    },
  }),
  defineRoute({
    ...admin,
    method: 'put',
    path: '/admin/v1/stations/{stationId}/broadcasts/{broadcastId}',
    operationId: 'adminPutBroadcast',
    access: { scope: 'schedule:write', action: 'schedule.broadcast-save' },
    summary: 'Create or replace a broadcast',
    description:
      'Cancelled when `cancelled` is true or `cancellationReason` is non-empty. Title and presenters default to the program’s. A moved broadcast takes its rundown along.',
    params: BroadcastParams,
    body: BroadcastBody,
    responses: { 200: { description: 'The stored broadcast.', schema: AdminBroadcast }, ...adminErrors },
    async handler({ svc, params, body }) {
      return inTransaction(svc.db, async (tx) => {
        const station = await stationForWrite(tx, params.stationId);
        const before = await broadcastSpan(tx, params.stationId, params.broadcastId);
        const { row, changed } = await saveBroadcast(tx, params.stationId, params.broadcastId, body, svc.clock.now());
        // The same broadcast sent again changes nothing: no feed rebuild, no `schedule.changed` event.
        if (changed) {
          await scheduleChanged(tx, svc, params.stationId, station.timezone);
          scheduleChangedEvent(tx, svc, params.stationId, station.timezone, [before, row]);
        }
        return presentAdminBroadcast(row);
      });
    },
  }),
  defineRoute({
    ...admin,
    method: 'delete',
    path: '/admin/v1/stations/{stationId}/broadcasts/{broadcastId}',
    operationId: 'adminDeleteBroadcast',
    access: { scope: 'schedule:write', action: 'schedule.broadcast-delete' },
    summary: 'Delete a broadcast and its rundown (204 also when it did not exist)',
    params: BroadcastParams,
    responses: { 204: { description: 'Deleted.' }, ...adminErrors },
    async handler({ ctx, svc, params }) {
      await inTransaction(svc.db, async (tx) => {
        const station = await stationForWrite(tx, params.stationId);
        const removed = await broadcastById(tx.trx, params.stationId, params.broadcastId);
        if (await removeBroadcast(tx, params.stationId, params.broadcastId)) {
          await scheduleChanged(tx, svc, params.stationId, station.timezone, { removed });
          scheduleChangedEvent(tx, svc, params.stationId, station.timezone, [removed?.row]);
        }
      });
      ctx.status = 204;
    },
  }),
  defineRoute({
    ...admin,
    method: 'put',
    path: '/admin/v1/stations/{stationId}/broadcasts/{broadcastId}/rundown',
    operationId: 'adminPutRundown',
    access: { scope: 'schedule:write', action: 'schedule.rundown-save' },
    summary: 'Replace a broadcast’s rundown',
    description:
      'Planned start times default to back-to-back from the broadcast start (each item after the previous one’s duration). Items keeping their id stay linked to observations followed against them; an item without an id keeps the id of an identical current item at the same index, so the same rundown sent again changes nothing.',
    params: BroadcastParams,
    body: RundownBody,
    responses: { 200: { description: 'The stored rundown with planned times.', schema: AdminRundown }, ...adminErrors },
    async handler({ svc, params, body }) {
      return inTransaction(svc.db, async (tx) => {
        const station = await stationForWrite(tx, params.stationId);
        const { items, ends, broadcast } = await saveRundown(tx, params.stationId, params.broadcastId, body);
        await scheduleChanged(tx, svc, params.stationId, station.timezone);
        // The stored (lower-case) id, as every other answer gives it, whatever case the path used.
        return presentAdminRundown(broadcast.id, items, ends);
      });
    },
  }),
];
