import type { TBoolean, TSchema } from '@sinclair/typebox';
import { Type, Nullable, StringEnum, SLUG_PATTERN, StationSlugParams, ErrorBody, type Static } from '../../http/schema.ts';
import { MAX_LATENCY_SECONDS, PUSH_PROVIDERS, STREAM_KEY_PATTERN, type CoreStreamUrl, type Profile, type SettingKey } from './model.ts';
import { stationModuleKeys, stationSettings, stationStreamFields } from './settings.ts';

// Built once, when this module loads: every feature registered its setting before (src/features.ts is
// the composition's first import), and settings.ts refuses registrations after this point.
const features = stationSettings();
const streamFields = stationStreamFields();
const moduleKeys = stationModuleKeys();

/**
 * The registered parts keyed by setting (or stream field) key, in registration order. Typed as nothing:
 * the schemas' static types are the core's, the features' types reach `Station` through model.ts.
 */
const partsOf = (parts: ReadonlyArray<{ key: string }>, schema: (i: number) => TSchema): Record<never, never> =>
  Object.fromEntries(parts.map((part, i) => [part.key, schema(i)]));

const Text = (max: number) => Nullable(Type.String({ maxLength: max }));

export const ProfileSchema = Type.Object(
  {
    tagline: Type.Optional(Text(300)),
    description: Type.Optional(Text(5000)),
    frequencyLabel: Type.Optional(Text(100)),
    websiteUrls: Type.Optional(Nullable(Type.Array(Type.String({ format: 'uri', maxLength: 2048 }), { maxItems: 20 }))),
    streamUrls: Type.Optional(
      Nullable(
        Type.Array(
          Type.Object(
            {
              label: Type.Optional(Text(100)),
              url: Type.String({ format: 'uri', maxLength: 2048 }),
              mime: Type.Optional(Text(100)),
              bitrateKbps: Type.Optional(Nullable(Type.Integer({ minimum: 1, maximum: 100000 }))),
              key: Type.Optional(
                Type.String({
                  pattern: STREAM_KEY_PATTERN,
                  description: 'unique within the station; `stream-{n}` (1-based position) when left out, stored so it does not move',
                }),
              ),
              latencySeconds: Type.Optional(
                Type.Integer({
                  minimum: 0,
                  maximum: MAX_LATENCY_SECONDS,
                  default: 0,
                  description: 'how far behind on-air time this stream’s listeners hear (measure it: docs/now-playing.md)',
                }),
              ),
              ...partsOf(streamFields, (i) => Type.Optional(streamFields[i].input)),
            },
            { additionalProperties: false },
          ),
          { maxItems: 20 },
        ),
      ),
    ),
    contactEmail: Type.Optional(Nullable(Type.String({ format: 'email', maxLength: 320 }))),
    phone: Type.Optional(Text(50)),
    address: Type.Optional(Text(500)),
    socialLinks: Type.Optional(
      Nullable(
        Type.Array(
          Type.Object(
            { network: Type.String({ minLength: 1, maxLength: 50 }), url: Type.String({ format: 'uri', maxLength: 2048 }) },
            { additionalProperties: false },
          ),
          { maxItems: 30 },
        ),
      ),
    ),
  },
  { additionalProperties: false },
);

const Flags = <K extends string>(keys: readonly K[]) =>
  Type.Partial(Type.Object(Object.fromEntries(keys.map((k) => [k, Type.Boolean()])) as Record<K, TBoolean>), {
    additionalProperties: false,
  });

/** Settings an operator may send on create and patch (every one optional). */
const settings = {
  profile: Type.Optional(ProfileSchema),
  modules: Type.Optional(Flags(moduleKeys)),
  entitlements: Type.Optional(Flags(['weather', 'traffic'] as const)),
  redistribution: Type.Optional(Flags(['weather', 'traffic'] as const)),
  push: Type.Optional(Type.Object({ provider: Nullable(StringEnum(PUSH_PROVIDERS)) }, { additionalProperties: false })),
  artworkLookup: Type.Optional(Type.Boolean()),
  nowPlayingFreshnessSeconds: Type.Optional(Type.Integer({ minimum: 1, maximum: 86400 })),
  rundownFollowing: Type.Optional(Type.Boolean()),
  upNext: Type.Optional(
    Type.Object(
      {
        enabled: Type.Optional(Type.Boolean({ description: 'default false: switch on only where the licence allows announcing' })),
        count: Type.Optional(Type.Integer({ minimum: 1, maximum: 5, description: 'items listed, default 1' })),
      },
      { additionalProperties: false },
    ),
  ),
  active: Type.Optional(Type.Boolean()),
  publicOnline: Type.Optional(Type.Boolean()),
};
/** The features' settings, after the core's (typed apart: the core names none of them). */
const featureSettings = partsOf(features, (i) => Type.Optional(features[i].input));

/** A feature's setting as the core's commands pass it on: its own fromInput reads it. */
export type SettingInputs = Partial<Record<SettingKey, unknown>>;

const Slug = Type.String({ pattern: SLUG_PATTERN, minLength: 3, maxLength: 63 });
const Name = Type.String({ minLength: 1, maxLength: 200 });
const Timezone = Type.String({
  minLength: 1,
  maxLength: 100,
  description: 'IANA time zone name, e.g. Europe/Berlin (a UTC offset such as +01:00 is 400)',
});

export const CreateStationBody = Type.Object(
  {
    slug: Slug,
    id: Type.Optional(Type.String({ pattern: '^[A-Za-z0-9_-]{1,80}$' })),
    name: Name,
    timezone: Timezone,
    ...settings,
    ...featureSettings,
  },
  { additionalProperties: false },
);
export type CreateStationBody = Static<typeof CreateStationBody> & SettingInputs;

export const PatchStationBody = Type.Object(
  {
    // docs/stations.md#names-and-ids: PATCH takes any of the POST's fields, `id` included; it cannot change (400 otherwise).
    id: Type.Optional(Type.String({ maxLength: 80, description: 'the station’s own id, as in the path (it cannot change)' })),
    slug: Type.Optional(Slug),
    name: Type.Optional(Name),
    timezone: Type.Optional(Timezone),
    ...settings,
    ...featureSettings,
  },
  { additionalProperties: false, minProperties: 1 },
);
export type PatchStationBody = Static<typeof PatchStationBody> & SettingInputs;

export const StationIdParams = Type.Object({ stationId: Type.String({ minLength: 1, maxLength: 80 }) }, { additionalProperties: false });

export const ProfileOut = Type.Object({
  tagline: Nullable(Type.String()),
  description: Nullable(Type.String()),
  frequencyLabel: Nullable(Type.String()),
  websiteUrls: Nullable(Type.Array(Type.String())),
  streamUrls: Nullable(
    Type.Array(
      Type.Object({
        label: Nullable(Type.String()),
        url: Type.String(),
        mime: Nullable(Type.String()),
        bitrateKbps: Nullable(Type.Integer()),
        key: Type.String(),
        latencySeconds: Type.Integer(),
        ...partsOf(streamFields, (i) => streamFields[i].output),
      }),
    ),
  ),
  contactEmail: Nullable(Type.String()),
  phone: Nullable(Type.String()),
  address: Nullable(Type.String()),
  socialLinks: Nullable(Type.Array(Type.Object({ network: Type.String(), url: Type.String() }))),
});

export type ProfileOut = Static<typeof ProfileOut>;
// The schema and model.ts's `Profile` describe the same object (the core's stream entry fields): either
// changing alone fails the type check.
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
type CoreProfile = Omit<Profile, 'streamUrls'> & { streamUrls: CoreStreamUrl[] | null };
true satisfies Same<ProfileOut, CoreProfile>;

export const AdminStation = Type.Object({
  id: Type.String(),
  slug: Type.String(),
  name: Type.String(),
  timezone: Type.String(),
  profile: ProfileOut,
  active: Type.Boolean(),
  publicOnline: Type.Boolean(),
  modules: Type.Record(Type.String(), Type.Boolean()),
  entitlements: Type.Object({ weather: Type.Boolean(), traffic: Type.Boolean() }),
  redistribution: Type.Object({ weather: Type.Boolean(), traffic: Type.Boolean() }),
  push: Type.Object({ provider: Nullable(Type.String()) }),
  artworkLookup: Type.Boolean(),
  nowPlayingFreshnessSeconds: Type.Integer(),
  rundownFollowing: Type.Boolean(),
  upNext: Type.Object({ enabled: Type.Boolean(), count: Type.Integer() }),
  ...partsOf(features, (i) => features[i].output),
  createdAt: Type.String(),
  updatedAt: Type.String(),
});

const Link = Nullable(Type.String());
const resourceParts: Record<never, never> = Object.fromEntries(
  features.flatMap(({ resource }) => (resource ? [[resource.name, resource.schema]] : [])),
);

export const StationDocument = Type.Object(
  {
    contractVersion: Type.Literal(1),
    id: Type.String(),
    slug: Type.String(),
    name: Type.String(),
    timezone: Type.String(),
    profile: ProfileOut,
    resources: Type.Object({
      schemas: Link,
      content: Link,
      schedule: Link,
      programs: Link,
      currentBroadcast: Link,
      nowPlaying: Link,
      trackHistory: Link,
      weather: Link,
      traffic: Link,
      calendar: Link,
      graphql: Link,
      media: Link,
      ...resourceParts,
      realtime: Nullable(
        Type.Object({
          url: Type.String({ description: 'WebSocket URL of the station feed (`wss://…`).' }),
          channel: Type.String(),
          sse: Type.String({ description: 'Server-Sent Events URL of the same feed (`https://…/v1/realtime/sse?channels[]=…`).' }),
        }),
      ),
    }),
    delivery: Type.Object({ pollIntervalSeconds: Type.Integer() }),
  },
  { title: 'Station' },
);
export type StationDocument = Static<typeof StationDocument>;

export { StationSlugParams, ErrorBody };
