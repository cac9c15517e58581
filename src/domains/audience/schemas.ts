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
    interval: Type.Optional(Type.Union([Type.Literal('hour'), Type.Literal('day')], { description: 'bucket size in the station’s time zone (default hour)' })),
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
