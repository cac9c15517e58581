import { Type, type Static } from '../../http/schema.ts';
import { ValidationError } from '../../lib/errors.ts';
import { matchKey } from '../../lib/matchKey.ts';

// The station setting `inbox` (docs/inbox.md, "Station setting"): which parts are open, the request
// policy, the limits and the moderation rules. A PATCH merges the sent fields into what is stored.
// Registered in station.ts.

export interface InboxSetting {
  requests: boolean;
  messages: boolean;
  likes: boolean;
  maxLength: number;
  perClientPerHour: number;
  trackRepeatMinutes: number;
  artistRepeatMinutes: number;
  holdLinks: boolean;
  blockedWords: string[];
  retentionDays: number;
}

export const DEFAULT_INBOX: Readonly<InboxSetting> = Object.freeze({
  requests: true,
  messages: true,
  likes: true,
  maxLength: 500,
  perClientPerHour: 5,
  trackRepeatMinutes: 180,
  artistRepeatMinutes: 60,
  holdLinks: true,
  blockedWords: [],
  retentionDays: 30,
});

/** The longest a station may let messages be (its `maxLength` is at most this). */
export const MAX_TEXT_LENGTH = 1000;

const Flag = (description: string) => Type.Optional(Type.Boolean({ description }));
const Minutes = (description: string) => Type.Optional(Type.Integer({ minimum: 0, maximum: 1440, description }));

export const InboxInput = Type.Object(
  {
    requests: Flag('take song requests (and answer `requestable`); default true'),
    messages: Flag('take messages and dedications; default true'),
    likes: Flag('take likes and dislikes of the play on air; default true'),
    maxLength: Type.Optional(
      Type.Integer({ minimum: 1, maximum: MAX_TEXT_LENGTH, description: 'longest text, in characters (code points); default 500' }),
    ),
    perClientPerHour: Type.Optional(
      Type.Integer({ minimum: 1, maximum: 60, description: 'messages a client may send an hour; default 5' }),
    ),
    trackRepeatMinutes: Minutes('a track played this recently cannot be requested; 0 switches the rule off; default 180'),
    artistRepeatMinutes: Minutes('an artist played this recently cannot be requested; 0 switches the rule off; default 60'),
    holdLinks: Flag('hold messages holding a link for the studio to review; default true'),
    blockedWords: Type.Optional(
      Type.Array(Type.String({ minLength: 1, maxLength: 50, pattern: '^[^\\u0000-\\u001f\\u007f]*$' }), {
        maxItems: 200,
        description: 'a message holding one of these as a whole word (case, width and spacing ignored) is held for review',
      }),
    ),
    retentionDays: Type.Optional(
      Type.Integer({ minimum: 1, maximum: 365, description: 'messages and votes are deleted after this many days; default 30' }),
    ),
  },
  {
    title: 'InboxSettingInput',
    additionalProperties: false,
    description: 'The listener inbox (docs/inbox.md). A PATCH merges the sent fields into what is stored.',
  },
);
export type InboxInput = Static<typeof InboxInput>;

export const InboxOut = Type.Object(
  {
    requests: Type.Boolean(),
    messages: Type.Boolean(),
    likes: Type.Boolean(),
    maxLength: Type.Integer(),
    perClientPerHour: Type.Integer(),
    trackRepeatMinutes: Type.Integer(),
    artistRepeatMinutes: Type.Integer(),
    holdLinks: Type.Boolean(),
    blockedWords: Type.Array(Type.String()),
    retentionDays: Type.Integer(),
  },
  { title: 'InboxSetting' },
);

/** The stored block (possibly partial or null) with every field present. */
export const inboxFromStored = (stored: Partial<InboxSetting> | null | undefined): InboxSetting => ({
  ...DEFAULT_INBOX,
  ...stored,
  blockedWords: [...(stored?.blockedWords ?? DEFAULT_INBOX.blockedWords)],
});

/** A blocked word must hold something once compared (white space alone would match nothing sensible). */
export async function checkInbox(setting: InboxSetting): Promise<void> {
  const blank = setting.blockedWords.findIndex((word) => matchKey(word) === '');
  if (blank >= 0)
    throw new ValidationError('Invalid inbox setting.', [
      { path: `inbox.blockedWords.${blank}`, code: 'invalid_value', message: 'a blocked word must hold more than white space' },
    ]);
}
