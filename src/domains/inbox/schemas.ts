import { Nullable, StringEnum, Timestamp, Type, Uuid, type Static } from '../../http/schema.ts';
import { UUID_PATTERN } from '../../lib/ids.ts';
import { PSEUDONYM_PATTERN } from './identity.ts';
import { MESSAGE_KINDS, MESSAGE_STATUSES, REFUSAL_REASONS, STUDIO_STATUSES } from './model.ts';
import { MAX_TEXT_LENGTH } from './setting.ts';

// The listener inbox's route schemas (docs/inbox.md): the source of validation, types and OpenAPI.

const EXAMPLE_CLIENT_ID = '3f0c1b8e-7d2a-4c55-9e61-0b7f4a2d9c10';
const EXAMPLE_MESSAGE_ID = '7b1e2f4a-9c3d-4e5f-8a6b-1c2d3e4f5a6b';

const ClientId = Type.String({
  pattern: UUID_PATTERN,
  description: 'a UUID the app generates once per installation and keeps; stored only as an HMAC',
  examples: [EXAMPLE_CLIENT_ID],
});
const Pseudonym = Type.String({
  pattern: PSEUDONYM_PATTERN,
  description: 'the stable pseudonym of a listener (10 base32 characters); never the clientId',
  examples: ['k3mq7xz2ab'],
});
const Short = (description: string) => Type.String({ minLength: 1, maxLength: 80, description });
const TrackName = (description: string) => Type.String({ minLength: 1, maxLength: 200, description });

export const TrackInput = Type.Object(
  { artist: TrackName('the artist as the listener typed it'), title: TrackName('the title as the listener typed it') },
  { title: 'InboxTrackInput', additionalProperties: false },
);

export const PostMessageBody = Type.Object(
  {
    clientId: ClientId,
    kind: StringEnum(MESSAGE_KINDS, { description: '`request` is a song request (needs `track`); the others need `text`' }),
    text: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: MAX_TEXT_LENGTH,
        description: 'the message, stored and returned exactly as sent; at most the station’s `inbox.maxLength` characters',
      }),
    ),
    name: Type.Optional(Short('the name the listener signs with')),
    location: Type.Optional(Short('where the listener is')),
    track: Type.Optional(TrackInput),
  },
  {
    title: 'InboxMessageInput',
    additionalProperties: false,
    examples: [
      {
        clientId: EXAMPLE_CLIENT_ID,
        kind: 'request',
        text: 'For my sister, who turns 30 today!',
        name: 'Mia',
        location: 'Leipzig',
        track: { artist: 'Daft Punk', title: 'Digital Love' },
      },
    ],
  },
);
export type PostMessageBody = Static<typeof PostMessageBody>;

export const MessageAccepted = Type.Object(
  {
    id: Uuid,
    status: StringEnum(['pending', 'held'] as const, {
      description: '`pending`, or `held` for the studio to review (the later status is the studio’s)',
    }),
  },
  { title: 'InboxMessageAccepted', examples: [{ id: EXAMPLE_MESSAGE_ID, status: 'pending' }] },
);

export const RequestRefused = Type.Object(
  {
    error: Type.Object({
      code: Type.Literal('REQUEST_REFUSED'),
      message: Type.String(),
      requestId: Type.String(),
      reason: StringEnum(REFUSAL_REASONS),
      retryAfterSeconds: Type.Optional(Type.Integer({ minimum: 1, description: 'when time lifts the refusal: the seconds until it does' })),
    }),
  },
  {
    title: 'InboxRequestRefused',
    examples: [
      {
        error: {
          code: 'REQUEST_REFUSED',
          message: 'This track was played too recently to be requested.',
          requestId: '0b6f6d2e-3c1a-4f5e-9a77-2d4c8e1f0a93',
          reason: 'recently-played',
          retryAfterSeconds: 4210,
        },
      },
    ],
  },
);

export const RequestableQuery = Type.Object(
  {
    q: Type.String({ minLength: 2, maxLength: 100, description: 'part of an artist or title (case, width and accents ignored)' }),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 50, default: 20 })),
  },
  { additionalProperties: false },
);

export const RequestableTracks = Type.Object(
  {
    tracks: Type.Array(
      Type.Object({
        artist: Type.String(),
        title: Type.String(),
        artworkUrl: Type.Optional(Type.String({ description: 'HTTPS art of its latest play, when known' })),
        lastPlayedAt: Timestamp,
        requestable: Type.Boolean({ description: 'whether the request policy would take a request for it now' }),
        reason: Type.Optional(StringEnum(REFUSAL_REASONS)),
        retryAfterSeconds: Type.Optional(Type.Integer({ minimum: 1 })),
      }),
    ),
  },
  {
    title: 'InboxRequestableTracks',
    examples: [
      {
        tracks: [
          { artist: 'Daft Punk', title: 'Digital Love', lastPlayedAt: '2026-12-14T18:02:11.000Z', requestable: true },
          {
            artist: 'Daft Punk',
            title: 'One More Time',
            lastPlayedAt: '2026-12-15T09:40:03.000Z',
            requestable: false,
            reason: 'recently-played',
            retryAfterSeconds: 7380,
          },
        ],
      },
    ],
  },
);

export const PutLikeBody = Type.Object(
  {
    clientId: ClientId,
    value: Type.Union([Type.Literal(1), Type.Literal(-1), Type.Literal(0)], { description: '1 like, -1 dislike, 0 withdraws the vote' }),
  },
  { title: 'InboxVoteInput', additionalProperties: false, examples: [{ clientId: EXAMPLE_CLIENT_ID, value: 1 }] },
);

export const VoteResult = Type.Object(
  {
    playId: Uuid,
    value: Type.Integer({ description: 'this client’s vote now: 1, -1 or 0' }),
    likes: Type.Integer(),
    dislikes: Type.Integer(),
  },
  { title: 'InboxVote', examples: [{ playId: EXAMPLE_MESSAGE_ID, value: 1, likes: 128, dislikes: 9 }] },
);

export const ClientParams = Type.Object(
  { stationSlug: Type.String({ minLength: 3, maxLength: 63, description: 'public station slug' }), clientId: ClientId },
  { additionalProperties: false },
);

// ---- studio ----

export const Message = Type.Object(
  {
    id: Uuid,
    kind: StringEnum(MESSAGE_KINDS),
    text: Nullable(Type.String()),
    name: Nullable(Type.String()),
    location: Nullable(Type.String()),
    track: Nullable(Type.Object({ artist: Type.String(), title: Type.String() })),
    status: StringEnum(MESSAGE_STATUSES),
    client: Pseudonym,
    receivedAt: Timestamp,
    updatedAt: Timestamp,
  },
  {
    title: 'InboxMessage',
    examples: [
      {
        id: EXAMPLE_MESSAGE_ID,
        kind: 'dedication',
        text: 'For my sister, who turns 30 today!',
        name: 'Mia',
        location: 'Leipzig',
        track: null,
        status: 'pending',
        client: 'k3mq7xz2ab',
        receivedAt: '2026-12-15T10:02:11.000Z',
        updatedAt: '2026-12-15T10:02:11.000Z',
      },
    ],
  },
);
export type Message = Static<typeof Message>;

export const MessageParams = Type.Object(
  { stationId: Type.String({ minLength: 1, maxLength: 80 }), messageId: Uuid },
  { additionalProperties: false },
);

export const MessagesQuery = Type.Object(
  {
    status: Type.Optional(StringEnum(MESSAGE_STATUSES)),
    kind: Type.Optional(StringEnum(MESSAGE_KINDS)),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 50 })),
    cursor: Type.Optional(Type.String({ minLength: 1, maxLength: 500, description: 'a `nextCursor`, passed back unchanged' })),
  },
  { additionalProperties: false },
);

export const MessagePage = Type.Object({ messages: Type.Array(Message), nextCursor: Nullable(Type.String()) }, { title: 'InboxMessages' });

export const PatchMessageBody = Type.Object(
  { status: StringEnum(STUDIO_STATUSES) },
  { title: 'InboxMessageStatus', additionalProperties: false, examples: [{ status: 'answered' }] },
);

export const RequestVerdict = Type.Object(
  {
    requestable: Type.Boolean({ description: 'whether the request policy would take a request for this track now' }),
    reason: Type.Optional(
      StringEnum(REFUSAL_REASONS, { description: 'why not (another waiting request for the track counts; this one does not)' }),
    ),
    retryAfterSeconds: Type.Optional(Type.Integer({ minimum: 1, description: 'when time lifts the refusal: the seconds until it does' })),
  },
  {
    title: 'InboxRequestVerdict',
    examples: [{ requestable: true }, { requestable: false, reason: 'recently-played', retryAfterSeconds: 7380 }],
  },
);

export const StreamQuery = Type.Object(
  {
    lastEventId: Type.Optional(
      Type.String({ maxLength: 40, description: 'resume after this event id, for a first connection (the Last-Event-ID header wins)' }),
    ),
  },
  { additionalProperties: false },
);

export const BanBody = Type.Object(
  {
    messageId: Uuid,
    days: Type.Optional(Type.Integer({ minimum: 1, maximum: 365, description: 'how long; without it the ban lasts until lifted' })),
  },
  { title: 'InboxBanInput', additionalProperties: false, examples: [{ messageId: EXAMPLE_MESSAGE_ID, days: 30 }] },
);

export const Ban = Type.Object(
  { id: Uuid, client: Pseudonym, expiresAt: Nullable(Timestamp), createdAt: Timestamp },
  {
    title: 'InboxBan',
    examples: [
      {
        id: '5c9a1e2b-3d4f-4a6b-8c7d-9e0f1a2b3c4d',
        client: 'k3mq7xz2ab',
        expiresAt: '2027-01-14T10:02:11.000Z',
        createdAt: '2026-12-15T10:02:11.000Z',
      },
    ],
  },
);
export const BanList = Type.Object({ bans: Type.Array(Ban) }, { title: 'InboxBans' });

export const BanParams = Type.Object(
  { stationId: Type.String({ minLength: 1, maxLength: 80 }), banId: Uuid },
  { additionalProperties: false },
);

export const PseudonymParams = Type.Object(
  { stationId: Type.String({ minLength: 1, maxLength: 80 }), client: Pseudonym },
  { additionalProperties: false },
);

export const TracksQuery = Type.Object(
  {
    from: Type.Optional(Type.String({ description: 'ISO 8601 timestamp with zone; inclusive' })),
    to: Type.Optional(Type.String({ description: 'ISO 8601 timestamp with zone; exclusive; at most 92 days after from' })),
  },
  { additionalProperties: false },
);

export const TrackVotes = Type.Object(
  {
    tracks: Type.Array(
      Type.Object({
        artist: Nullable(Type.String()),
        title: Type.String(),
        plays: Type.Integer({ description: 'plays of the track in the range' }),
        likes: Type.Integer(),
        dislikes: Type.Integer(),
        performances: Nullable(Type.Integer({ description: 'the plays’ audience figures summed; null when none is known' })),
        likesPerThousand: Nullable(Type.Number({ description: 'likes × 1000 / performances; null without performances' })),
      }),
    ),
  },
  {
    title: 'InboxTrackVotes',
    examples: [
      {
        tracks: [
          { artist: 'Daft Punk', title: 'Digital Love', plays: 6, likes: 212, dislikes: 11, performances: 41800, likesPerThousand: 5.07 },
        ],
      },
    ],
  },
);
