import { StringEnum, Timestamp, Type, type Static } from '../../../http/schema.ts';
import { PUSH_PROVIDERS } from '../../stations/model.ts';

// A station's push provider credentials (docs/push.md#credentials): the body of the PUT and the view
// of what is stored (never the secret parts).

const Text = (maxLength: number) => Type.String({ minLength: 1, maxLength });

/** The service-account JSON file Google issues; members not named here are accepted and ignored. */
const ServiceAccount = Type.Object(
  {
    type: Type.Literal('service_account'),
    project_id: Text(200),
    client_email: Text(320),
    private_key: Type.String({ minLength: 1, maxLength: 20_000, description: 'PEM (PKCS#8) RSA key; never returned' }),
    token_uri: Type.String({ minLength: 1, maxLength: 2048, description: 'https:// (or http:// for tests and proxies) token endpoint' }),
  },
  { additionalProperties: true },
);

/**
 * One body for the three providers: which members are required depends on `provider` (checked by the
 * command, naming the missing member), so a typo gets a suggestion like everywhere else.
 */
export const PutPushCredentialsBody = Type.Object(
  {
    provider: StringEnum(PUSH_PROVIDERS),
    serviceAccount: Type.Optional(ServiceAccount),
    keyId: Type.Optional(Text(64)),
    teamId: Type.Optional(Text(64)),
    bundleId: Type.Optional(Text(255)),
    privateKey: Type.Optional(Type.String({ minLength: 1, maxLength: 20_000, description: 'PEM text of the .p8 key; never returned' })),
    environment: Type.Optional(StringEnum(['production', 'sandbox'] as const)),
    accessToken: Type.Optional(Type.String({ minLength: 1, maxLength: 4096, description: 'Expo access token; never returned' })),
  },
  {
    title: 'PushCredentialsInput',
    additionalProperties: false,
    description: 'fcm: `serviceAccount`; apns: `keyId`, `teamId`, `bundleId`, `privateKey`, `environment`; expo: `accessToken` (optional).',
  },
);
export type PutPushCredentialsBody = Static<typeof PutPushCredentialsBody>;

export const PushCredentialsView = Type.Object(
  {
    provider: StringEnum(PUSH_PROVIDERS),
    configured: Type.Literal(true),
    updatedAt: Timestamp,
    projectId: Type.Optional(Type.String()),
    clientEmail: Type.Optional(Type.String()),
    keyId: Type.Optional(Type.String()),
    teamId: Type.Optional(Type.String()),
    bundleId: Type.Optional(Type.String()),
    environment: Type.Optional(StringEnum(['production', 'sandbox'] as const)),
    accessToken: Type.Optional(Type.Boolean({ description: 'whether an access token is stored' })),
  },
  { title: 'PushCredentials' },
);
export type PushCredentialsView = Static<typeof PushCredentialsView>;
