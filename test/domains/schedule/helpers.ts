import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { admin, request, type Reply } from '../../support/http.ts';
import { listenerFixture, type TestStation } from '../../support/factories.ts';

// Schedule data built through the admin API, as an editorial system would.

export interface ScheduleFixture {
  station: TestStation;
  token: string;
  presenterId: string;
  programId: string;
}

export async function putPresenter(baseUrl: string, stationId: string, title: string, id: string = randomUUID()): Promise<string> {
  const res = await admin(baseUrl, 'PUT', `/stations/${stationId}/presenters/${id}`, { title });
  expect(res.status, JSON.stringify(res.body)).to.equal(200);
  return id;
}

export async function putProgram(
  baseUrl: string,
  stationId: string,
  body: Record<string, unknown>,
  id: string = randomUUID(),
): Promise<string> {
  const res = await admin(baseUrl, 'PUT', `/stations/${stationId}/programs/${id}`, { presenterIds: [], slots: [], ...body });
  expect(res.status, JSON.stringify(res.body)).to.equal(200);
  return id;
}

/** A station (default Europe/Berlin) with a listener token, one presenter and one program presented by them. */
export async function scheduleFixture(baseUrl: string, overrides: Record<string, unknown> = {}): Promise<ScheduleFixture> {
  const { station, token } = await listenerFixture(baseUrl, overrides);
  const presenterId = await putPresenter(baseUrl, station.id, 'Ana Host');
  const programId = await putProgram(baseUrl, station.id, {
    title: 'Morning Show',
    description: 'Wake up',
    presenterIds: [presenterId],
    slots: [{ weekday: 1, startTime: '06:00', durationMinutes: 180 }],
  });
  return { station, token, presenterId, programId };
}

export function putBroadcastRaw(
  baseUrl: string,
  stationId: string,
  body: Record<string, unknown>,
  id: string = randomUUID(),
): Promise<Reply> {
  return admin(baseUrl, 'PUT', `/stations/${stationId}/broadcasts/${id}`, body);
}

/** PUTs a live, published broadcast of the fixture's program; returns its id. */
export async function putBroadcast(
  baseUrl: string,
  fx: ScheduleFixture,
  startsAt: string,
  endsAt: string,
  extra: Record<string, unknown> = {},
  id: string = randomUUID(),
): Promise<string> {
  const res = await putBroadcastRaw(baseUrl, fx.station.id, { programId: fx.programId, startsAt, endsAt, nature: 'live', ...extra }, id);
  expect(res.status, JSON.stringify(res.body)).to.equal(200);
  return id;
}

export async function putRundown(baseUrl: string, stationId: string, broadcastId: string, items: unknown[]): Promise<Reply> {
  return admin(baseUrl, 'PUT', `/stations/${stationId}/broadcasts/${broadcastId}/rundown`, { items });
}

export function getSchedule(baseUrl: string, fx: ScheduleFixture, query = ''): Promise<Reply> {
  return request(baseUrl, 'GET', `/api/v1/stations/${fx.station.slug}/schedule${query}`, { token: fx.token });
}

export const ids = (res: Reply): string[] => (res.body.broadcasts as Array<{ id: string }>).map((b) => b.id);
