import { createCipheriv, createDecipheriv, createHmac, hkdfSync, randomBytes } from 'node:crypto';

// Signing secrets (docs/webhooks.md#registering-operator-token): `whsec_` + base64 of 32 random bytes, shown once. Stored
// encrypted with AES-256-GCM under a key derived from WAVELINE_SECRET by HKDF-SHA256, so a database dump
// alone cannot sign. Stored form: `v1.` + base64url(iv ‖ tag ‖ ciphertext).

export const SECRET_PREFIX = 'whsec_';

const keys = new Map<string, Buffer>();
function keyFor(serverSecret: string): Buffer {
  let key = keys.get(serverSecret);
  if (!key) {
    key = Buffer.from(hkdfSync('sha256', serverSecret, 'waveline', 'webhook-signing-secrets', 32));
    keys.set(serverSecret, key);
  }
  return key;
}

export const generateSigningSecret = (): string => SECRET_PREFIX + randomBytes(32).toString('base64');

export function encryptSecret(serverSecret: string, secret: string): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', keyFor(serverSecret), iv);
  const ciphertext = Buffer.concat([cipher.update(secret, 'utf8'), cipher.final()]);
  return 'v1.' + Buffer.concat([iv, cipher.getAuthTag(), ciphertext]).toString('base64url');
}

export function decryptSecret(serverSecret: string, stored: string): string {
  if (!stored.startsWith('v1.')) throw new Error('unknown webhook secret format');
  const raw = Buffer.from(stored.slice(3), 'base64url');
  const decipher = createDecipheriv('aes-256-gcm', keyFor(serverSecret), raw.subarray(0, 12));
  decipher.setAuthTag(raw.subarray(12, 28));
  return Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]).toString('utf8');
}

/** `v1,<base64 HMAC-SHA256 of "{id}.{timestamp}.{body}">` keyed with the secret's decoded bytes (Standard Webhooks). */
export function signatureOf(secret: string, id: string, timestamp: number, body: string): string {
  const key = Buffer.from(secret.slice(SECRET_PREFIX.length), 'base64');
  return 'v1,' + createHmac('sha256', key).update(`${id}.${timestamp}.${body}`).digest('base64');
}
