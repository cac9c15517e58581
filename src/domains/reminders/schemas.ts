import { Type, Uuid, type Static } from '../../http/schema.ts';

// Follows (docs/push.md#following-for-station-app-developers, docs/push.md#the-operators-view): the
// listener's PUT body and answer, and the operators' follower counts.

export const REMIND_BEFORE_MINUTES = [0, 5, 10, 15, 30, 60] as const;
export const MAX_FOLLOWS = 100;

const DeviceToken = Type.String({
  minLength: 1,
  maxLength: 4096,
  pattern: '^[^\\u0000-\\u001f\\u007f]*$',
  description: 'the push provider’s device token of a registered device',
});

const RemindBeforeMinutes = Type.Integer({
  enum: [...REMIND_BEFORE_MINUTES],
  default: 0,
  description: 'minutes before the start the reminder is due: 0, 5, 10, 15, 30 or 60',
});

/** One follow: exactly one of `programId`, `presenterId` (checked by the command, naming the index). */
export const FollowInput = Type.Object(
  {
    programId: Type.Optional(Uuid),
    presenterId: Type.Optional(Uuid),
    remindBeforeMinutes: Type.Optional(RemindBeforeMinutes),
  },
  { title: 'PushFollowInput', additionalProperties: false, description: '`{programId}` or `{presenterId}`, with `remindBeforeMinutes?`' },
);
export type FollowInput = Static<typeof FollowInput>;

export const PutFollowsBody = Type.Object(
  { token: DeviceToken, follows: Type.Array(FollowInput, { maxItems: MAX_FOLLOWS }) },
  { title: 'PushFollowsInput', additionalProperties: false },
);
export type PutFollowsBody = Static<typeof PutFollowsBody>;

export const Follow = Type.Union(
  [
    Type.Object({ programId: Uuid, remindBeforeMinutes: Type.Integer() }, { additionalProperties: false }),
    Type.Object({ presenterId: Uuid, remindBeforeMinutes: Type.Integer() }, { additionalProperties: false }),
  ],
  { title: 'PushFollow' },
);
export type Follow = Static<typeof Follow>;

export const FollowList = Type.Object({ follows: Type.Array(Follow) }, { title: 'PushFollows' });
export type FollowList = Static<typeof FollowList>;

export const FollowerCounts = Type.Object(
  {
    programs: Type.Array(Type.Object({ programId: Uuid, title: Type.String(), followers: Type.Integer() })),
    presenters: Type.Array(Type.Object({ presenterId: Uuid, name: Type.String(), followers: Type.Integer() })),
  },
  {
    title: 'PushFollowerCounts',
    description: 'devices following each program and presenter (only those with followers), most followed first',
  },
);
export type FollowerCounts = Static<typeof FollowerCounts>;
