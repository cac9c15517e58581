import { PassThrough } from 'node:stream';
import { adminErrorResponses, adminWrite } from '../../http/responses.ts';
import { defineRoute } from '../../http/route.ts';
import { ErrorBody, Type } from '../../http/schema.ts';
import { NotFoundError } from '../../lib/errors.ts';
import { StationIdParams } from '../stations/schemas.ts';
import { eraseByPseudonym } from './erasure.ts';
import { trackVotes } from './research.ts';
import {
  Ban,
  BanBody,
  BanList,
  BanParams,
  Message,
  MessagePage,
  MessageParams,
  MessagesQuery,
  PatchMessageBody,
  PseudonymParams,
  RequestVerdict,
  StreamQuery,
  TrackVotes,
  TracksQuery,
} from './schemas.ts';
import { inboxStreams, resumeAfter } from './streams.ts';
import { createBan, deleteBan, listBans, messagePage, requestVerdict, setStatus } from './studio.ts';

// The studio API (docs/inbox.md, "The studio API"): operator keys with `inbox:read` for reads and the
// stream, `inbox:write` for changes (audited). Each needs its own scope: writing does not imply reading.

const read = { scope: 'inbox:read' } as const;
const write = (action: string) => ({ scope: 'inbox:write' as const, action });
const forbidden = { 403: { description: 'The key lacks the scope this needs (FORBIDDEN names it).', schema: ErrorBody } };
const errors = adminErrorResponses('Station, message or ban not found.', forbidden);

const InboxStream = Type.String({
  title: 'InboxStream',
  description:
    'Server-Sent Events: `retry: 3000`, then each new or changed message as `id: <position>`, `event: message`, `data: <InboxMessage JSON>`; `event: ready` (with the position reached) once the replay is sent; `: ping` every 15 s.',
  examples: [
    'retry: 3000\n\nid: 41\nevent: message\ndata: {"id":"7b1e2f4a-9c3d-4e5f-8a6b-1c2d3e4f5a6b","kind":"message",…}\n\nid: 41\nevent: ready\ndata: {}\n\n',
  ],
});

export const inboxAdminRoutes = [
  defineRoute({
    ...adminWrite,
    method: 'get',
    path: '/admin/v1/stations/{stationId}/inbox/messages',
    operationId: 'adminListInboxMessages',
    access: read,
    summary: 'The studio’s inbox: messages, dedications and requests, newest first',
    description: 'Filter by `status` and `kind`; `limit` 1–100 (default 50); `nextCursor` (signed) continues the same list.',
    params: StationIdParams,
    query: MessagesQuery,
    responses: { 200: { description: 'A page of messages.', schema: MessagePage }, ...errors },
    async handler({ svc, params, query }) {
      const station = await svc.stations.require(params.stationId);
      return messagePage(svc.db, svc.config.secret, station.id, query);
    },
  }),
  defineRoute({
    ...adminWrite,
    method: 'patch',
    path: '/admin/v1/stations/{stationId}/inbox/messages/{messageId}',
    operationId: 'adminPatchInboxMessage',
    access: write('inbox.status'),
    summary: 'Set a message shown, answered or hidden',
    description: 'Every open studio stream gets the changed message within 2 s. The same status again changes nothing.',
    params: MessageParams,
    body: PatchMessageBody,
    responses: { 200: { description: 'The message.', schema: Message }, ...errors },
    async handler({ svc, params, body }) {
      const station = await svc.stations.require(params.stationId);
      return setStatus(svc, station.id, params.messageId, body.status);
    },
  }),
  defineRoute({
    ...adminWrite,
    method: 'get',
    path: '/admin/v1/stations/{stationId}/inbox/messages/{messageId}/policy',
    operationId: 'adminInboxRequestPolicy',
    access: read,
    summary: 'Whether the request policy would take a stored request now',
    description:
      'The verdict a new request for the track would get now (`reason`, and `retryAfterSeconds` when time lifts it), not counting this request itself: the studio’s check before playing it. 404 for a message that is not a request.',
    params: MessageParams,
    responses: { 200: { description: 'The verdict.', schema: RequestVerdict }, ...errors },
    async handler({ svc, params }) {
      const station = await svc.stations.require(params.stationId);
      return requestVerdict(svc, station, params.messageId);
    },
  }),
  defineRoute({
    ...adminWrite,
    method: 'get',
    path: '/admin/v1/stations/{stationId}/inbox/stream',
    operationId: 'adminInboxStream',
    access: read,
    summary: 'The studio stream: every new or changed message as a Server-Sent Event, live from every web process',
    description:
      'Send the operator key in `Authorization` (a page reads it with fetch streaming). Each event’s `id` is the station’s stream position; reconnect with `Last-Event-ID` (or `lastEventId` in the URL for a first connection) to get every message new or changed since, then live ones. Without one, the stream starts now.',
    params: StationIdParams,
    query: StreamQuery,
    responses: {
      200: { description: 'The event stream (text/event-stream).', contentType: 'text/event-stream', schema: InboxStream },
      ...errors,
    },
    async handler({ ctx, svc, params, query }) {
      const station = await svc.stations.require(params.stationId);
      const after = resumeAfter(ctx.get('last-event-id') || undefined, query.lastEventId);
      ctx.status = 200;
      ctx.set('Cache-Control', 'no-store');
      ctx.set('X-Accel-Buffering', 'no');
      if (ctx.method === 'HEAD') {
        ctx.set('Content-Type', 'text/event-stream; charset=utf-8');
        return undefined;
      }
      const body = new PassThrough();
      ctx.body = body;
      ctx.set('Content-Type', 'text/event-stream; charset=utf-8');
      ctx.req.socket.setTimeout(0);
      ctx.req.socket.setNoDelay(true);
      body.write('retry: 3000\n\n');
      let close: (() => void) | null = null;
      let gone = false;
      ctx.res.once('close', () => {
        gone = true;
        close?.();
      });
      close = await inboxStreams(svc).open(station.id, after, {
        write: (chunk) => void body.write(chunk),
        buffered: () => body.writableLength + ctx.res.writableLength,
        socket: ctx.req.socket,
        end: (closeConnection) => {
          if (closeConnection) ctx.res.once('finish', () => ctx.req.socket.end());
          body.end();
        },
      });
      if (gone) close();
      return undefined;
    },
  }),
  defineRoute({
    ...adminWrite,
    method: 'post',
    path: '/admin/v1/stations/{stationId}/inbox/bans',
    operationId: 'adminCreateInboxBan',
    access: write('inbox.ban'),
    summary: 'Ban the client and the address a message came from',
    description:
      'From then on their messages are stored `hidden` (they are answered as usual and never learn of the ban). Without `days` the ban lasts until lifted.',
    params: StationIdParams,
    body: BanBody,
    responses: { 201: { description: 'The ban.', schema: Ban }, ...errors },
    async handler({ ctx, svc, params, body }) {
      const station = await svc.stations.require(params.stationId);
      const ban = await createBan(svc, station.id, body.messageId, body.days);
      ctx.status = 201;
      return ban;
    },
  }),
  defineRoute({
    ...adminWrite,
    method: 'get',
    path: '/admin/v1/stations/{stationId}/inbox/bans',
    operationId: 'adminListInboxBans',
    access: read,
    summary: 'The bans in force, newest first',
    params: StationIdParams,
    responses: { 200: { description: 'Bans.', schema: BanList }, ...errors },
    async handler({ svc, params }) {
      const station = await svc.stations.require(params.stationId);
      return listBans(svc.db, station.id, svc.clock.now());
    },
  }),
  defineRoute({
    ...adminWrite,
    method: 'delete',
    path: '/admin/v1/stations/{stationId}/inbox/bans/{banId}',
    operationId: 'adminDeleteInboxBan',
    access: write('inbox.unban'),
    summary: 'Lift a ban',
    params: BanParams,
    responses: { 204: { description: 'Lifted.' }, ...errors },
    async handler({ ctx, svc, params }) {
      const station = await svc.stations.require(params.stationId);
      if (!(await deleteBan(svc.db, station.id, params.banId))) throw new NotFoundError('Ban not found.');
      ctx.status = 204;
    },
  }),
  defineRoute({
    ...adminWrite,
    method: 'delete',
    path: '/admin/v1/stations/{stationId}/inbox/clients/{client}',
    operationId: 'adminDeleteInboxClient',
    access: write('inbox.erase'),
    summary: 'Erase a listener by its pseudonym: every message and vote at the station',
    description: 'The plays’ counts drop its votes; its bans stay. Answers 204 whether or not anything was stored.',
    params: PseudonymParams,
    responses: { 204: { description: 'Erased.' }, ...errors },
    async handler({ ctx, svc, params }) {
      const station = await svc.stations.require(params.stationId);
      await eraseByPseudonym(svc, station.id, params.client);
      ctx.status = 204;
    },
  }),
  defineRoute({
    ...adminWrite,
    method: 'get',
    path: '/admin/v1/stations/{stationId}/inbox/tracks',
    operationId: 'adminInboxTracks',
    access: read,
    summary: 'Music research: which tracks listeners liked, per thousand listeners who heard them',
    description:
      'The tracks with at least one vote in `[from, to)` (at most 92 days), most liked first, then by likes per thousand. `performances` sums the plays’ audience figures (docs/audience.md); `likesPerThousand` = likes × 1000 / performances.',
    params: StationIdParams,
    query: TracksQuery,
    responses: { 200: { description: 'Tracks.', schema: TrackVotes }, ...errors },
    async handler({ svc, params, query }) {
      const station = await svc.stations.require(params.stationId);
      return trackVotes(svc, station, query);
    },
  }),
];
