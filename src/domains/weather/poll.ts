import type { TSchema } from '@sinclair/typebox';
import { validate } from '../../http/validate.ts';
import { ProviderUnavailableError, ValidationError } from '../../lib/errors.ts';
import { HttpError, getJson, type JsonAnswer } from '../../lib/httpClient.ts';
import type { Services } from '../../services.ts';
import { storeTraffic, storeWeather } from './commands.ts';
import type { Feed } from './model.ts';
import { OpenMeteoForecast, openMeteoToWeather, openMeteoUrl } from './providers/openMeteo.ts';
import { TomTomIncidents, tomTomToTraffic, tomTomUrl } from './providers/tomtom.ts';
import { PutTrafficBody, PutWeatherBody, type StoredReceipt } from './schemas.ts';
import { findSource, recordPoll } from './sources.ts';
import { invalidateReads } from '../../lib/readCache.ts';

// One poll of a station's provider: fetch, check the provider's answer against the part of its format
// we read, map it to the admin PUT body, check that like any admin PUT, store through the same command.

const TIMEOUT_MS = 10_000;

export type PollResult = { skipped: 'no source' | 'not delivered' } | StoredReceipt;

/** Fetches JSON and checks its shape. The URL may carry an API key, so it never goes into an error. */
async function fetchJson<T>(url: string, schema: TSchema, provider: string): Promise<T> {
  let answer: JsonAnswer;
  try {
    // The base URL is the operator's: its redirects are followed.
    answer = await getJson(url, { timeoutMs: TIMEOUT_MS, maxRedirects: 20 });
  } catch (err) {
    if (!(err instanceof HttpError)) throw err;
    if (err.stage !== 'request') throw new ProviderUnavailableError(`${provider} answered with invalid JSON.`);
    throw new ProviderUnavailableError(`${provider} could not be reached (${(err.cause as Error).name}).`);
  }
  if (answer.status !== 200) throw new ProviderUnavailableError(`${provider} answered HTTP ${answer.status}.`);
  try {
    return validate<T>(schema, 'body', answer.json);
  } catch (err) {
    const first = err instanceof ValidationError ? err.issues?.[0] : undefined;
    throw new ProviderUnavailableError(
      `${provider} answered in an unexpected format${first ? ` (${first.path || 'body'}: ${first.message})` : ''}.`,
    );
  }
}

export async function pollFeed(svc: Services, stationId: string, feed: Feed): Promise<PollResult> {
  const [source, station] = await Promise.all([findSource(svc.db, stationId, feed), svc.stations.byIdOrNull(stationId)]);
  if (!source || !station) return { skipped: 'no source' };
  // Provider calls cost money: no polling for a feed the station has switched off or is not entitled to.
  if (!station.modules[feed] || !station.entitlements[feed]) return { skipped: 'not delivered' };
  const now = svc.clock.now();
  try {
    let receipt: StoredReceipt;
    if (source.feed === 'weather') {
      const forecast = await fetchJson<OpenMeteoForecast>(openMeteoUrl(source.settings, station.timezone), OpenMeteoForecast, 'Open-Meteo');
      const body = validate<PutWeatherBody>(PutWeatherBody, 'body', openMeteoToWeather(forecast, source.settings, station.timezone));
      receipt = await storeWeather(svc.db, { stationId, body, now });
    } else {
      const incidents = await fetchJson<TomTomIncidents>(tomTomUrl(source.settings), TomTomIncidents, 'TomTom');
      const body = validate<PutTrafficBody>(PutTrafficBody, 'body', tomTomToTraffic(incidents, source.settings, now));
      receipt = await storeTraffic(svc.db, { stationId, body, now });
    }
    await recordPoll(svc.db, stationId, feed, now, null);
    // The listener reads show the new snapshot from the next read on, in every web process.
    await invalidateReads(svc, stationId, source.feed);
    return receipt;
  } catch (err) {
    const message =
      err instanceof ValidationError
        ? `the provider's data failed validation: ${err.issues?.map((i) => `${i.path} ${i.message}`).join('; ')}`
        : (err as Error).message;
    await recordPoll(svc.db, stationId, feed, now, message.slice(0, 1000));
    throw err;
  }
}
