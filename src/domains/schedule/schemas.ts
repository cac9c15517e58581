import { Type, Nullable, StringEnum, Uuid, Timestamp, LocalDate, StationSlugParams, type Static } from '../../http/schema.ts';
import { ITEM_KINDS, NATURES } from './model.ts';
import { StreamRef } from '../stations/streams.ts';

export { StationSlugParams };

// ---- listener input ----

export const WindowQuery = Type.Object(
  {
    fromDate: Type.Optional(
      Type.String({
        pattern: '^\\d{4}-\\d{2}-\\d{2}$',
        description: 'first local date (inclusive); default today in the station time zone',
      }),
    ),
    throughDate: Type.Optional(
      Type.String({
        pattern: '^\\d{4}-\\d{2}-\\d{2}$',
        description: 'last local date (inclusive); default fromDate + 6 days; at most 31 days in all',
      }),
    ),
  },
  { additionalProperties: false },
);
export type WindowQuery = Static<typeof WindowQuery>;

// ---- listener output ----

/** A program's or presenter's picture (docs/schedule.md#images): absolute URLs; null when none is set. */
export const Image = Nullable(
  Type.Object(
    {
      url: Type.String({ description: 'absolute URL of the uploaded image' }),
      variants: Type.Object(
        { '300': Type.String(), '600': Type.String(), '1200': Type.String() },
        { description: 'square JPEG renditions by side in px (absolute URLs; never upscaled)' },
      ),
    },
    { title: 'Image' },
  ),
);
export type Image = Static<typeof Image>;

const PresenterRef = Type.Object({ id: Uuid, title: Type.String(), image: Image });
const ProgramRef = Type.Object({ id: Uuid, title: Type.String(), profileId: Nullable(Type.String()), image: Image });

export const Broadcast = Type.Object(
  {
    id: Uuid,
    title: Type.String(),
    startsAt: Timestamp,
    endsAt: Timestamp,
    timezone: Type.String(),
    localDate: LocalDate,
    resolution: Type.Literal('exact'),
    status: StringEnum(['scheduled', 'live', 'ended', 'cancelled'] as const),
    cancellationReason: Type.String({ description: 'empty when not cancelled' }),
    repeatOfId: Nullable(Uuid),
    nature: StringEnum(NATURES),
    program: ProgramRef,
    presenters: Type.Array(PresenterRef),
  },
  { title: 'Broadcast' },
);
export type Broadcast = Static<typeof Broadcast>;

export const ScheduleResponse = Type.Object(
  {
    contractVersion: Type.Literal(1),
    timezone: Type.String(),
    broadcasts: Type.Array(Broadcast, { maxItems: 1000 }),
    truncated: Type.Boolean({ description: 'true when more broadcasts exist in the window than were returned' }),
  },
  { title: 'Schedule' },
);
export type ScheduleResponse = Static<typeof ScheduleResponse>;

const SlotOut = Type.Object({
  weekday: Type.Integer({ minimum: 1, maximum: 7 }),
  startTime: Type.String(),
  durationMinutes: Type.Integer(),
});
export type Slot = Static<typeof SlotOut>;

export const ProgramSummary = Type.Object(
  {
    id: Uuid,
    title: Type.String(),
    description: Nullable(Type.String()),
    profileId: Nullable(Type.String()),
    image: Image,
    presenters: Type.Array(PresenterRef),
    slots: Type.Array(SlotOut),
  },
  { title: 'ProgramSummary' },
);
export type ProgramSummary = Static<typeof ProgramSummary>;

export const ProgramsResponse = Type.Object(
  {
    contractVersion: Type.Literal(1),
    timezone: Type.String(),
    fromDate: LocalDate,
    throughDate: LocalDate,
    programs: Type.Array(ProgramSummary),
  },
  { title: 'Programs' },
);
export type ProgramsResponse = Static<typeof ProgramsResponse>;

export const CurrentBroadcastResponse = Type.Object(
  {
    contractVersion: Type.Literal(1),
    timezone: Type.String(),
    asOf: Timestamp,
    broadcast: Nullable(Broadcast),
    stream: Type.Optional(StreamRef),
  },
  { title: 'CurrentBroadcast' },
);
export type CurrentBroadcastResponse = Static<typeof CurrentBroadcastResponse>;

/**
 * Up next (docs/now-playing.md#up-next): the next `count` rundown items after the
 * current position, ads and jingles skipped. Only where the station switched it on.
 */
export const UpNextItem = Type.Object(
  {
    itemId: Uuid,
    kind: StringEnum(ITEM_KINDS),
    artist: Nullable(Type.String()),
    title: Type.String(),
    durationSeconds: Nullable(Type.Number()),
    plannedStartsAt: Timestamp,
  },
  { title: 'UpNextItem' },
);
export const UpNext = Type.Array(UpNextItem, { maxItems: 5 });
export type UpNext = Static<typeof UpNext>;

export const OnAir = Nullable(
  Type.Object({
    broadcast: Type.Object({
      id: Uuid,
      title: Type.String(),
      startsAt: Timestamp,
      endsAt: Timestamp,
      nature: StringEnum(NATURES),
      program: Type.Object({ id: Uuid, title: Type.String(), profileId: Nullable(Type.String()) }),
    }),
    position: Nullable(
      Type.Object({
        itemId: Uuid,
        index: Type.Integer({ minimum: 0 }),
        kind: StringEnum(ITEM_KINDS),
        artist: Nullable(Type.String()),
        title: Type.String(),
        plannedStartsAt: Timestamp,
        plannedEndsAt: Timestamp,
      }),
    ),
    followed: Nullable(Type.Object({ itemId: Uuid, outcome: Type.String(), at: Timestamp })),
    upNext: Type.Optional(UpNext),
  }),
);
export type OnAir = Static<typeof OnAir>;

// ---- admin input ----

const StationId = Type.String({ minLength: 1, maxLength: 80 });
export const PresenterParams = Type.Object({ stationId: StationId, presenterId: Uuid }, { additionalProperties: false });
export const ProgramParams = Type.Object({ stationId: StationId, programId: Uuid }, { additionalProperties: false });
export const BroadcastParams = Type.Object({ stationId: StationId, broadcastId: Uuid }, { additionalProperties: false });

const Title = Type.String({ minLength: 1, maxLength: 500 });
const Instant = Type.String({ format: 'date-time', description: 'ISO 8601 timestamp with offset' });

const ImageVersionId = Type.Optional(
  Nullable({ ...Uuid, description: 'an uploaded image version of the station (its picture); omitted or null: none' }),
);

export const PresenterBody = Type.Object({ title: Title, imageVersionId: ImageVersionId }, { additionalProperties: false });
export type PresenterBody = Static<typeof PresenterBody>;

export const SlotIn = Type.Object(
  {
    weekday: Type.Integer({ minimum: 1, maximum: 7, description: '1 = Monday … 7 = Sunday' }),
    startTime: Type.String({ pattern: '^([01][0-9]|2[0-3]):[0-5][0-9]$', description: 'local HH:MM' }),
    durationMinutes: Type.Integer({ minimum: 1, maximum: 7 * 24 * 60 }),
  },
  { additionalProperties: false },
);

export const ProgramBody = Type.Object(
  {
    title: Title,
    description: Type.Optional(Nullable(Type.String({ maxLength: 10000 }))),
    profileId: Type.Optional(Nullable(Type.String({ minLength: 1, maxLength: 200 }))),
    imageVersionId: ImageVersionId,
    presenterIds: Type.Optional(Type.Array(Uuid, { maxItems: 100, uniqueItems: true, description: 'default none' })),
    slots: Type.Optional(Type.Array(SlotIn, { maxItems: 200, description: 'default none' })),
  },
  { additionalProperties: false },
);
export type ProgramBody = Static<typeof ProgramBody>;

export const BroadcastBody = Type.Object(
  {
    programId: Uuid,
    title: Type.Optional(Nullable(Title)),
    startsAt: Instant,
    endsAt: Instant,
    nature: StringEnum(NATURES),
    published: Type.Optional(Type.Boolean({ description: 'default true' })),
    cancelled: Type.Optional(Type.Boolean()),
    cancellationReason: Type.Optional(Nullable(Type.String({ maxLength: 2000 }))),
    repeatOfId: Type.Optional(Nullable(Uuid)),
    presenterIds: Type.Optional(Nullable(Type.Array(Uuid, { maxItems: 100, uniqueItems: true }))),
  },
  { additionalProperties: false },
);
export type BroadcastBody = Static<typeof BroadcastBody>;

export const RundownItemIn = Type.Object(
  {
    id: Type.Optional(Uuid),
    kind: StringEnum(ITEM_KINDS),
    artist: Type.Optional(Nullable(Type.String({ maxLength: 500 }))),
    title: Title,
    durationSeconds: Type.Optional(Nullable(Type.Number({ minimum: 0, maximum: 86400 }))),
    plannedStartsAt: Type.Optional(Instant),
  },
  { additionalProperties: false },
);
export const RundownBody = Type.Object({ items: Type.Array(RundownItemIn, { maxItems: 1000 }) }, { additionalProperties: false });
export type RundownBody = Static<typeof RundownBody>;

// ---- admin output ----

export const AdminPresenter = Type.Object({
  id: Uuid,
  title: Type.String(),
  imageVersionId: Nullable(Uuid),
  createdAt: Timestamp,
  updatedAt: Timestamp,
});
export const AdminProgram = Type.Object({
  id: Uuid,
  title: Type.String(),
  description: Nullable(Type.String()),
  profileId: Nullable(Type.String()),
  imageVersionId: Nullable(Uuid),
  presenterIds: Type.Array(Uuid),
  slots: Type.Array(SlotOut),
  createdAt: Timestamp,
  updatedAt: Timestamp,
});
export const AdminBroadcast = Type.Object({
  id: Uuid,
  programId: Uuid,
  title: Nullable(Type.String({ description: 'null: the program title is used' })),
  startsAt: Timestamp,
  endsAt: Timestamp,
  nature: StringEnum(NATURES),
  published: Type.Boolean(),
  cancelled: Type.Boolean(),
  cancellationReason: Type.String(),
  repeatOfId: Nullable(Uuid),
  presenterIds: Nullable(Type.Array(Uuid, { description: 'null: the program presenters are used' })),
  createdAt: Timestamp,
  updatedAt: Timestamp,
});
export const AdminRundown = Type.Object({
  broadcastId: Uuid,
  items: Type.Array(
    Type.Object({
      id: Uuid,
      index: Type.Integer(),
      kind: StringEnum(ITEM_KINDS),
      artist: Nullable(Type.String()),
      title: Type.String(),
      durationSeconds: Nullable(Type.Number()),
      plannedStartsAt: Timestamp,
      plannedEndsAt: Timestamp,
    }),
  ),
});
