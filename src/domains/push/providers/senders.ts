import type { Services } from '../../../services.ts';
import { apnsSender } from './apns.ts';
import type { PushCredentials } from './credentials.ts';
import { expoSender } from './expo.ts';
import { fcmSender } from './fcm.ts';
import type { PushSender } from './types.ts';

/** The sender of the credentials' provider, with its base URL and request timeout from the config. */
export function senderFor(svc: Pick<Services, 'config' | 'clock'>, creds: PushCredentials): PushSender {
  const timeoutMs = svc.config.push.requestTimeoutSeconds * 1000;
  if (creds.provider === 'fcm') return fcmSender(creds, { baseUrl: svc.config.push.fcmUrl, timeoutMs });
  if (creds.provider === 'apns') {
    const baseUrl = creds.environment === 'sandbox' ? svc.config.push.apnsSandboxUrl : svc.config.push.apnsUrl;
    return apnsSender(creds, { baseUrl, timeoutMs, now: () => svc.clock.now().getTime() });
  }
  return expoSender(creds, { baseUrl: svc.config.push.expoUrl, timeoutMs });
}
