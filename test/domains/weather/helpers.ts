import { expect } from 'chai';
import { admin, request } from '../../support/http.ts';
import { createToken, listenerFixture } from '../../support/factories.ts';
import type { TestServer } from '../../support/server.ts';

// Weather and traffic data loaded through the admin API, the way an external collector stores it.

export type Feed = 'weather' | 'traffic';

/** Switched on, entitled and cleared for redistribution: delivered. */
export const delivered = (feed: Feed) => ({ modules: { [feed]: true }, entitlements: { [feed]: true }, redistribution: { [feed]: true } });

export async function feedFixture(server: TestServer, feed: Feed, overrides: Record<string, unknown> = delivered(feed)) {
  const { station, token } = await listenerFixture(server.url, { timezone: 'Europe/Vienna', ...overrides });
  const path = `/api/v1/stations/${station.slug}/${feed}`;
  const get = (headers: Record<string, string> = {}, credential: string | null = token) =>
    request(server.url, 'GET', path, { token: credential ?? undefined, headers });
  const put = (body: unknown) => admin(server.url, 'PUT', `/stations/${station.id}/${feed}`, body);
  const putOk = async (body: unknown) => {
    const res = await put(body);
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    return res;
  };
  const settings = (patch: Record<string, unknown>) => admin(server.url, 'PATCH', `/stations/${station.id}`, patch);
  const otherCredential = async (scopes: string[]) => (await createToken(server.url, station.id, scopes)).token;
  return { station, token, path, get, put, putOk, settings, otherCredential };
}

/** Issues of a 400 answer as "path code" strings, with suggestions where given. */
export function issuesOf(res: {
  status: number;
  body: { error: { code: string; issues?: Array<{ path: string; code?: string; suggestion?: unknown }> } };
}): string[] {
  expect(res.status, JSON.stringify(res.body)).to.equal(400);
  expect(res.body.error.code).to.equal('VALIDATION_ERROR');
  return (res.body.error.issues ?? []).map((i) => `${i.path} ${i.code}${i.suggestion === undefined ? '' : ` → ${String(i.suggestion)}`}`);
}

export const currentBerlin = {
  locationId: 'berlin-mitte',
  locationName: 'Berlin Mitte',
  kind: 'current',
  validFrom: '2026-11-21T12:00:00+01:00',
  validUntil: '2026-11-21T13:00:00+01:00',
  conditionCode: 'PartlyCloudy',
  temperatureC: 7.5,
  feelsLikeC: 5,
  precipitationProbability: 20,
  precipitationMm: 0,
  windSpeedKph: 14.4,
  windDirectionDeg: 250,
  humidity: 81,
  uvIndex: 1,
};

export const dailyBerlin = {
  locationId: 'berlin-mitte',
  locationName: 'Berlin Mitte',
  kind: 'daily',
  validFrom: '2026-11-21T23:00:00Z',
  validUntil: '2026-11-22T23:00:00Z',
  conditionCode: 'Rain',
  temperatureMinC: 2,
  temperatureMaxC: 9,
  precipitationProbability: 80,
  precipitationMm: 6.2,
};

export const accident = {
  id: 'inc-1',
  type: 'accident',
  severity: 'major',
  road: 'A100',
  direction: 'Neukölln',
  description: 'Two lanes blocked after an accident',
  from: 'Dreieck Funkturm',
  to: 'Kurfürstendamm',
  delaySeconds: 900,
  lengthMeters: 2500,
  startsAt: '2026-11-21T11:40:00+01:00',
  endsAt: '2026-11-21T14:00:00+01:00',
  location: { lat: 52.5, lon: 13.28 },
};
