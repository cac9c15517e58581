import { Type, Nullable, Timestamp, type Static } from '../../http/schema.ts';

export const PushSamplesBody = Type.Object(
  {
    samples: Type.Array(
      Type.Object(
        {
          stream: Type.String({ minLength: 1, maxLength: 64, description: 'a key of the station’s `profile.streamUrls[]`' }),
          listeners: Type.Integer({ minimum: 0, maximum: 100_000_000 }),
          at: Type.Union([Type.String({ maxLength: 64 }), Type.Integer({ minimum: 0 })], {
            description: 'when the count was taken: ISO 8601 with a zone, or Unix milliseconds; within the last 24 h, not in the future',
          }),
        },
        { additionalProperties: false },
      ),
      { minItems: 1, maxItems: 100 },
    ),
  },
  { additionalProperties: false },
);
export type PushSamplesBody = Static<typeof PushSamplesBody>;

export const PushSamplesResponse = Type.Object({ accepted: Type.Integer({ minimum: 0 }) }, { title: 'ListenerSamplesAccepted' });

export const AudienceQuery = Type.Object(
  {
    from: Type.Optional(Type.String({ description: 'ISO 8601 timestamp with zone; inclusive (or broadcastId)' })),
    to: Type.Optional(Type.String({ description: 'ISO 8601 timestamp with zone; exclusive; at most 31 days after from' })),
    interval: Type.Optional(
      Type.Union([Type.Literal('hour'), Type.Literal('day')], { description: 'bucket size in the station’s time zone (default hour)' }),
    ),
    stream: Type.Optional(Type.String({ minLength: 1, maxLength: 64, description: 'only this stream key' })),
    broadcastId: Type.Optional(Type.String({ format: 'uuid', description: 'the broadcast’s [startsAt, endsAt) instead of from/to' })),
  },
  { additionalProperties: false },
);
export type AudienceQuery = Static<typeof AudienceQuery>;

const Figures = Type.Object({ listenerHours: Nullable(Type.Number()), peak: Nullable(Type.Integer()) });

export const Audience = Type.Object(
  {
    stationId: Type.String(),
    timezone: Type.String(),
    from: Timestamp,
    to: Timestamp,
    interval: Type.Union([Type.Literal('hour'), Type.Literal('day')]),
    broadcastId: Nullable(Type.String()),
    series: Type.Array(
      Type.Object({
        at: Timestamp,
        listenerHours: Nullable(Type.Number()),
        peak: Nullable(Type.Integer()),
        streams: Type.Record(Type.String(), Figures),
      }),
    ),
    total: Figures,
    streams: Type.Record(Type.String(), Type.Object({ lastSampleAt: Nullable(Timestamp), lastError: Nullable(Type.String()) })),
  },
  { title: 'Audience' },
);

export const ReportQuery = Type.Object(
  {
    month: Type.String({ pattern: '^\\d{4}-(0[1-9]|1[0-2])$', description: 'YYYY-MM, in the station’s time zone' }),
    format: Type.Literal('soundexchange'),
  },
  { additionalProperties: false },
);
export type ReportQuery = Static<typeof ReportQuery>;

// ---- station settings (registered in station.ts) ----

const CATEGORY = Type.Union(
  ['A', 'B', 'C', 'D', 'E', 'F', 'G', 'H', 'I', 'J', 'K', 'L', 'M'].map((c) => Type.Literal(c)),
  { description: 'SoundExchange transmission category, one letter A–M (docs/audience.md)' },
);

export const RoyaltiesInput = Type.Object(
  {
    serviceName: Type.Optional(
      Nullable(
        Type.String({
          minLength: 1,
          maxLength: 100,
          description: 'the service name SoundExchange knows the station by (report rows and file name)',
        }),
      ),
    ),
    transmissionCategory: Type.Optional(Nullable(CATEGORY)),
  },
  { additionalProperties: false, description: 'what the SoundExchange report of use needs (docs/audience.md)' },
);
export type RoyaltiesInput = Static<typeof RoyaltiesInput>;

export const RoyaltiesOut = Type.Object({ serviceName: Nullable(Type.String()), transmissionCategory: Nullable(Type.String()) });

const StatusUrl = Type.String({ format: 'uri', maxLength: 2048 });

export const StreamStatsInput = Nullable(
  Type.Union(
    [
      Type.Object(
        {
          kind: Type.Literal('icecast'),
          url: { ...StatusUrl, description: 'the Icecast server’s `/status-json.xsl`' },
          mount: Type.String({ pattern: '^/?[^\\s?#]{1,200}$', description: 'the mount whose listeners count, e.g. `/live.mp3`' }),
        },
        { additionalProperties: false },
      ),
      Type.Object(
        {
          kind: Type.Literal('shoutcast'),
          url: { ...StatusUrl, description: 'the SHOUTcast v2 stream’s `/stats?sid=N&json=1`' },
        },
        { additionalProperties: false },
      ),
    ],
    { description: 'where the poller reads this stream’s listener count (docs/audience.md); null: none (push counts instead)' },
  ),
);
export type StreamStatsInput = Static<typeof StreamStatsInput>;

export const StreamStatsOut = Nullable(
  Type.Object(
    { kind: Type.String(), url: Type.String(), mount: Type.Optional(Type.String()) },
    { description: 'the stream’s listener count source' },
  ),
);
