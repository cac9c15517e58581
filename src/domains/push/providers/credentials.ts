import { createPrivateKey, type KeyObject } from 'node:crypto';
import type { Db } from '../../../lib/db.ts';
import { ProviderMismatchError, ValidationError, type Issue } from '../../../lib/errors.ts';
import type { PushProvider, Station } from '../../stations/model.ts';
import { decryptSecret, encryptSecret } from '../../webhooks/secrets.ts';
import type { PushCredentialsView, PutPushCredentialsBody } from './schemas.ts';

// A station's push provider credentials (docs/push.md#credentials). The non-secret parts are
// stored as they are (`settings`); the private key or access token is stored encrypted (AES-256-GCM under
// a key derived from WAVELINE_SECRET, as webhook signing secrets) and is never returned or logged:
// nothing here passes a body or a key to the logger, and errors name fields, never their values.

const TABLE = 'push_credentials';

export interface FcmSettings {
  provider: 'fcm';
  projectId: string;
  clientEmail: string;
  tokenUri: string;
}
export interface ApnsSettings {
  provider: 'apns';
  keyId: string;
  teamId: string;
  bundleId: string;
  environment: 'production' | 'sandbox';
}
export interface ExpoSettings {
  provider: 'expo';
  accessToken: boolean;
}
export type PushSettings = FcmSettings | ApnsSettings | ExpoSettings;

/** What a sender needs: the settings, the decrypted secret (PEM key or access token) and a version for caches. */
export type PushCredentials = PushSettings & { secret: string | null; version: string };

interface CredentialsRow {
  station_id: string;
  provider: PushProvider;
  settings: PushSettings;
  secret_enc: string | null;
  updated_at: Date;
}

const invalid = (issues: Issue[]) => new ValidationError('Invalid push credentials.', issues);

function parseKey(pem: string, path: string, expected: { type: 'rsa' | 'ec'; curve?: string }): KeyObject {
  let key: KeyObject;
  try {
    key = createPrivateKey(pem);
  } catch {
    throw invalid([{ path, code: 'invalid_key', message: `${path} is not a PEM private key that parses` }]);
  }
  const curve = key.asymmetricKeyDetails?.namedCurve;
  if (key.asymmetricKeyType !== expected.type || (expected.curve && curve !== expected.curve)) {
    const want = expected.type === 'rsa' ? 'an RSA private key' : 'an EC P-256 (ES256) private key';
    throw invalid([{ path, code: 'invalid_key', message: `${path} must be ${want}` }]);
  }
  return key;
}

function checkHttpUrl(value: string, path: string): void {
  let url: URL | null = null;
  try {
    url = new URL(value);
  } catch {
    url = null;
  }
  if (!url || (url.protocol !== 'https:' && url.protocol !== 'http:'))
    throw invalid([{ path, code: 'invalid_url', message: `${path} must be an absolute https:// (or http://) URL` }]);
}

const MEMBERS: Record<PushProvider, string[]> = {
  fcm: ['serviceAccount'],
  apns: ['keyId', 'teamId', 'bundleId', 'privateKey', 'environment'],
  expo: ['accessToken'],
};

/** Checks the body for its provider; returns the settings to store and the secret to encrypt. */
export function parseCredentials(station: Station, body: PutPushCredentialsBody): { settings: PushSettings; secret: string | null } {
  const foreign = Object.keys(body).filter((key) => key !== 'provider' && !MEMBERS[body.provider].includes(key));
  if (foreign.length > 0)
    throw invalid(
      foreign.map((path) => ({ path, code: 'not_allowed', message: `${path} is not a member of ${body.provider} credentials` })),
    );
  const missing =
    body.provider === 'apns' ? MEMBERS.apns.filter((k) => k !== 'environment' && body[k as keyof typeof body] === undefined) : [];
  if (body.provider === 'fcm' && !body.serviceAccount) missing.push('serviceAccount');
  if (missing.length > 0)
    throw invalid(missing.map((path) => ({ path, code: 'required', message: `${path} is required for ${body.provider}` })));
  if (station.push.provider !== body.provider) {
    throw new ProviderMismatchError(
      station.push.provider === null
        ? 'This station has no push provider configured (set push.provider first).'
        : `This station sends push notifications through ${station.push.provider}, not ${body.provider}.`,
    );
  }
  if (body.provider === 'fcm') {
    const account = body.serviceAccount!;
    parseKey(account.private_key, 'serviceAccount.private_key', { type: 'rsa' });
    checkHttpUrl(account.token_uri, 'serviceAccount.token_uri');
    return {
      settings: { provider: 'fcm', projectId: account.project_id, clientEmail: account.client_email, tokenUri: account.token_uri },
      secret: account.private_key,
    };
  }
  if (body.provider === 'apns') {
    parseKey(body.privateKey!, 'privateKey', { type: 'ec', curve: 'prime256v1' });
    return {
      settings: {
        provider: 'apns',
        keyId: body.keyId!,
        teamId: body.teamId!,
        bundleId: body.bundleId!,
        environment: body.environment ?? 'production',
      },
      secret: body.privateKey!,
    };
  }
  return { settings: { provider: 'expo', accessToken: body.accessToken !== undefined }, secret: body.accessToken ?? null };
}

export function presentCredentials(row: { settings: PushSettings; updated_at: Date }): PushCredentialsView {
  const { provider, ...rest } = row.settings;
  const visible =
    provider === 'fcm' ? { projectId: (rest as FcmSettings).projectId, clientEmail: (rest as FcmSettings).clientEmail } : rest;
  return { provider, configured: true, updatedAt: row.updated_at.toISOString(), ...visible } as PushCredentialsView;
}

export async function saveCredentials(
  db: Db,
  serverSecret: string,
  input: { station: Station; body: PutPushCredentialsBody; now: Date },
): Promise<PushCredentialsView> {
  const { settings, secret } = parseCredentials(input.station, input.body);
  const row = {
    station_id: input.station.id,
    provider: settings.provider,
    settings: JSON.stringify(settings),
    secret_enc: secret === null ? null : encryptSecret(serverSecret, secret),
    updated_at: input.now,
  };
  await db.transaction((trx) => trx(TABLE).insert(row).onConflict('station_id').merge());
  return presentCredentials({ settings, updated_at: input.now });
}

export async function findCredentialsRow(db: Db, stationId: string): Promise<CredentialsRow | undefined> {
  return db<CredentialsRow>(TABLE).where({ station_id: stationId }).first();
}

export async function deleteCredentials(db: Db, stationId: string): Promise<void> {
  await db.transaction((trx) => trx(TABLE).where({ station_id: stationId }).delete());
}

/** The station's credentials for `provider`, decrypted; null when none are stored for that provider. */
export async function loadCredentials(
  db: Db,
  serverSecret: string,
  stationId: string,
  provider: PushProvider,
): Promise<PushCredentials | null> {
  const row = await findCredentialsRow(db, stationId);
  if (!row || row.provider !== provider) return null;
  const secret = row.secret_enc === null ? null : decryptSecret(serverSecret, row.secret_enc);
  return { ...row.settings, secret, version: `${stationId}:${row.updated_at.getTime()}` } as PushCredentials;
}
