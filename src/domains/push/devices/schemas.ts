import { Type, StringEnum, type Static } from '../../../http/schema.ts';
import { PUSH_PROVIDERS } from '../../stations/model.ts';

// Push device registration bodies (docs/push.md#routes).
// Unknown properties are refused everywhere (a typo like `plattform` gets a suggestion).

export const PLATFORMS = ['ios', 'android'] as const;

// No provider issues tokens with control characters; Postgres cannot even store NUL.
const DeviceToken = Type.String({
  minLength: 1,
  maxLength: 4096,
  pattern: '^[^\\u0000-\\u001f\\u007f]*$',
  description: 'the push provider’s device token (not an API credential); no control characters',
});

/** Topic switches; topics not named keep their setting, so `{}` is a valid update that changes nothing. */
export const Topics = Type.Object(
  { alerts: Type.Optional(Type.Boolean()), content: Type.Optional(Type.Boolean()) },
  { additionalProperties: false },
);
export type Topics = Static<typeof Topics>;

export const RegisterDeviceBody = Type.Object(
  {
    token: DeviceToken,
    platform: StringEnum(PLATFORMS),
    provider: StringEnum(PUSH_PROVIDERS),
    topics: Type.Optional(Topics),
  },
  { title: 'PushDevice', additionalProperties: false },
);
export type RegisterDeviceBody = Static<typeof RegisterDeviceBody>;

export const UpdateTopicsBody = Type.Object({ token: DeviceToken, topics: Topics }, { additionalProperties: false });
export type UpdateTopicsBody = Static<typeof UpdateTopicsBody>;

export const UnregisterDeviceBody = Type.Object({ token: DeviceToken }, { additionalProperties: false });
export type UnregisterDeviceBody = Static<typeof UnregisterDeviceBody>;

export const PushAck = Type.Object({ ok: Type.Literal(true) }, { title: 'PushAck' });
export type PushAck = Static<typeof PushAck>;

export const DeviceCount = Type.Object({
  total: Type.Integer(),
  platforms: Type.Object({ ios: Type.Integer(), android: Type.Integer() }),
  topics: Type.Object({ alerts: Type.Integer(), content: Type.Integer() }),
});
export type DeviceCount = Static<typeof DeviceCount>;
