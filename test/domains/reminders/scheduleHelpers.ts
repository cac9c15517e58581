import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { admin } from '../../support/http.ts';

// Presenters, programs and broadcasts through the admin API, for the follows and reminders tests.

export function scheduleOf(baseUrl: string, stationId: string) {
  const put = async (path: string, json: unknown) => {
    const res = await admin(baseUrl, 'PUT', `/stations/${stationId}${path}`, json);
    expect(res.status, `${path}: ${JSON.stringify(res.body)}`).to.equal(200);
    return res.body;
  };
  return {
    async presenter(title: string, id: string = randomUUID()): Promise<string> {
      await put(`/presenters/${id}`, { title });
      return id;
    },
    async program(title: string, presenterIds: string[] = [], id: string = randomUUID()): Promise<string> {
      await put(`/programs/${id}`, { title, presenterIds, slots: [] });
      return id;
    },
    /** A broadcast of `programId` from `startsAt`, one hour long; `extra` overrides any field. */
    async broadcast(programId: string, startsAt: Date, extra: Record<string, unknown> = {}, id: string = randomUUID()): Promise<string> {
      await put(`/broadcasts/${id}`, {
        programId,
        startsAt: startsAt.toISOString(),
        endsAt: new Date(startsAt.getTime() + 3600_000).toISOString(),
        nature: 'live',
        ...extra,
      });
      return id;
    },
    remove: (path: string) => admin(baseUrl, 'DELETE', `/stations/${stationId}${path}`),
  };
}
