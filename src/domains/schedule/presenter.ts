import {
  broadcastStatus,
  type BroadcastRow,
  type PresenterRef,
  type PresenterRow,
  type ResolvedBroadcast,
  type RundownItemRow,
  type SlotRow,
} from './model.ts';
import type { ProgramWithDetails } from './queries.ts';
import type { Broadcast, CurrentBroadcastResponse, Image, ProgramSummary, ProgramsResponse, ScheduleResponse, Slot } from './schemas.ts';
import { imageRef } from '../media/images.ts';
import type { ScheduleWindow } from './window.ts';
import { localDate } from './window.ts';

// The public JSON of the schedule, shared by REST, GraphQL and the feed rows so they never drift.

export const CONTRACT_VERSION = 1 as const;

/**
 * The `image` of a program or presenter: absolute URLs under `publicBaseUrl` (the config's), the
 * square variants rendered on demand by the published-media route. Pure: the reads stay cached bytes.
 */
const imageOf = (publicBaseUrl: string, stationId: string, versionId: string | null): Image =>
  versionId ? imageRef(publicBaseUrl, stationId, versionId) : null;

const presentPresenterRef = (publicBaseUrl: string, stationId: string, p: PresenterRef) => ({
  id: p.id,
  title: p.title,
  image: imageOf(publicBaseUrl, stationId, p.imageVersionId),
});

export function presentBroadcast(resolved: ResolvedBroadcast, timezone: string, now: Date, publicBaseUrl: string): Broadcast {
  const { row, program, presenters } = resolved;
  return {
    id: row.id,
    title: row.title ?? program.title,
    startsAt: row.starts_at.toISOString(),
    endsAt: row.ends_at.toISOString(),
    timezone,
    localDate: localDate(row.starts_at, timezone),
    resolution: 'exact',
    status: broadcastStatus(row, now),
    cancellationReason: row.cancelled ? row.cancellation_reason : '',
    repeatOfId: row.repeat_of_id,
    nature: row.nature,
    program: {
      id: program.id,
      title: program.title,
      profileId: program.profileId,
      image: imageOf(publicBaseUrl, row.station_id, program.imageVersionId),
    },
    presenters: presenters.map((p) => presentPresenterRef(publicBaseUrl, row.station_id, p)),
  };
}

export function presentSchedule(
  broadcasts: ResolvedBroadcast[],
  truncated: boolean,
  timezone: string,
  now: Date,
  publicBaseUrl: string,
): ScheduleResponse {
  return {
    contractVersion: CONTRACT_VERSION,
    timezone,
    broadcasts: broadcasts.map((b) => presentBroadcast(b, timezone, now, publicBaseUrl)),
    truncated,
  };
}

/** `at`: the instant the broadcast is current at (heard time on a stream); `asOf`: when the answer was computed. */
export function presentCurrentBroadcast(
  current: ResolvedBroadcast | null,
  timezone: string,
  at: Date,
  asOf: Date,
  publicBaseUrl: string,
): CurrentBroadcastResponse {
  return {
    contractVersion: CONTRACT_VERSION,
    timezone,
    asOf: asOf.toISOString(),
    broadcast: current ? presentBroadcast(current, timezone, at, publicBaseUrl) : null,
  };
}

const presentSlot = (slot: SlotRow): Slot => ({
  weekday: slot.weekday,
  startTime: slot.start_time,
  durationMinutes: slot.duration_minutes,
});

export function presentProgramSummary({ program, presenters, slots }: ProgramWithDetails, publicBaseUrl: string): ProgramSummary {
  return {
    id: program.id,
    title: program.title,
    description: program.description,
    profileId: program.profile_id,
    image: imageOf(publicBaseUrl, program.station_id, program.image_version_id),
    presenters: presenters.map((p) => presentPresenterRef(publicBaseUrl, program.station_id, p)),
    slots: slots.map(presentSlot),
  };
}

export function presentPrograms(
  programs: ProgramWithDetails[],
  window: ScheduleWindow,
  timezone: string,
  publicBaseUrl: string,
): ProgramsResponse {
  return {
    contractVersion: CONTRACT_VERSION,
    timezone,
    fromDate: window.fromDate,
    throughDate: window.throughDate,
    programs: programs.map((p) => presentProgramSummary(p, publicBaseUrl)),
  };
}

// ---- admin views: the stored objects ----

export const presentAdminPresenter = (row: PresenterRow) => ({
  id: row.id,
  title: row.title,
  imageVersionId: row.image_version_id,
  createdAt: row.created_at.toISOString(),
  updatedAt: row.updated_at.toISOString(),
});

export const presentAdminProgram = ({ program, presenters, slots }: ProgramWithDetails) => ({
  id: program.id,
  title: program.title,
  description: program.description,
  profileId: program.profile_id,
  imageVersionId: program.image_version_id,
  presenterIds: presenters.map((p) => p.id),
  slots: slots.map(presentSlot),
  createdAt: program.created_at.toISOString(),
  updatedAt: program.updated_at.toISOString(),
});

export const presentAdminBroadcast = (row: BroadcastRow) => ({
  id: row.id,
  programId: row.program_id,
  title: row.title,
  startsAt: row.starts_at.toISOString(),
  endsAt: row.ends_at.toISOString(),
  nature: row.nature,
  published: row.published,
  cancelled: row.cancelled,
  cancellationReason: row.cancellation_reason,
  repeatOfId: row.repeat_of_id,
  presenterIds: row.presenter_ids,
  createdAt: row.created_at.toISOString(),
  updatedAt: row.updated_at.toISOString(),
});

export const presentAdminRundown = (broadcastId: string, items: RundownItemRow[], ends: Date[]) => ({
  broadcastId,
  items: items.map((item, i) => ({
    id: item.id,
    index: item.position,
    kind: item.kind,
    artist: item.artist,
    title: item.title,
    durationSeconds: item.duration_seconds,
    plannedStartsAt: item.planned_starts_at.toISOString(),
    plannedEndsAt: ends[i].toISOString(),
  })),
});
