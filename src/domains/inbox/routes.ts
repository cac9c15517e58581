import { defineRoute } from '../../http/route.ts';
import { ErrorBody, StationSlugParams } from '../../http/schema.ts';
import { ModuleDisabledError } from '../../lib/errors.ts';
import { requestableTracks } from './catalogue.ts';
import { eraseByClientId } from './erasure.ts';
import { clientAddress } from './identity.ts';
import {
  MessageAccepted,
  ClientParams,
  PostMessageBody,
  PutLikeBody,
  RequestableQuery,
  RequestableTracks,
  RequestRefused,
  VoteResult,
} from './schemas.ts';
import { submitMessage } from './submit.ts';
import { vote } from './votes.ts';

// The listener inbox's routes for station apps (docs/inbox.md): gates station (404) → credential
// inbox:write (401) → module inbox (404 MODULE_DISABLED) → input (400); a part the station switched off
// (`requests`, `messages`, `likes`) answers 404 MODULE_DISABLED too. No answer carries a clientId or an
// address, nor tells a banned sender of its ban.

const inbox = {
  tags: ['inbox'],
  surface: 'listener' as const,
  station: 'slug' as const,
  scope: 'inbox:write' as const,
  module: 'inbox' as const,
};

const refusals = (notFound: string) => ({
  400: { description: 'Invalid input (VALIDATION_ERROR with issues).', schema: ErrorBody },
  401: { description: 'Credential missing or invalid (scope inbox:write).', schema: ErrorBody },
  404: { description: notFound, schema: ErrorBody },
});

export const inboxRoutes = [
  defineRoute({
    ...inbox,
    method: 'post',
    path: '/api/v1/stations/{stationSlug}/inbox/messages',
    operationId: 'postInboxMessage',
    summary: 'Send the studio a message, a dedication or a song request',
    description:
      'A `request` needs `track` and passes the station’s request policy (409 REQUEST_REFUSED with `reason` and, when time lifts it, `retryAfterSeconds`). ' +
      'A client may send `inbox.perClientPerHour` messages an hour and an address 30 (429 RATE_LIMITED with Retry-After). ' +
      'The same kind and text (and track) from the same client within 10 minutes is the same message: 202 with the first one’s id, stored once. ' +
      'A message holding a blocked word or (with `holdLinks`) a link is `held` for the studio to review.',
    params: StationSlugParams,
    body: PostMessageBody,
    bodyLimit: '16kb',
    responses: {
      202: { description: 'Taken: its id and status.', schema: MessageAccepted },
      ...refusals(
        'Station unknown, inactive or offline; the inbox module, or this part of it (requests, messages), switched off (MODULE_DISABLED).',
      ),
      409: {
        description: 'REQUEST_REFUSED: the request policy refuses this track now (`reason`, `retryAfterSeconds`).',
        schema: RequestRefused,
      },
      429: { description: 'RATE_LIMITED: the client’s or the address’s hourly limit; Retry-After says when.', schema: ErrorBody },
    },
    async handler({ ctx, svc, station, body }) {
      const accepted = await submitMessage(svc, station, body, clientAddress(ctx.req, svc.config.trustedProxyHops));
      ctx.status = 202;
      return accepted;
    },
  }),
  defineRoute({
    ...inbox,
    rateLimit: 'listener' as const,
    method: 'get',
    path: '/api/v1/stations/{stationSlug}/inbox/requestable',
    operationId: 'getInboxRequestable',
    summary: 'Search the request catalogue: the tracks played in the last 90 days, with whether each can be requested now',
    description:
      'Tracks whose artist or title holds `q` (case, width and accents ignored), most played first. Each says whether the request policy would take a request now, and if not why (`reason`) and, when time lifts it, in how long (`retryAfterSeconds`).',
    params: StationSlugParams,
    query: RequestableQuery,
    responses: {
      200: { description: 'Matching tracks.', schema: RequestableTracks },
      ...refusals('Station unknown, inactive or offline; the inbox module or its requests switched off (MODULE_DISABLED).'),
      429: { description: 'Rate limited.', schema: ErrorBody },
    },
    async handler({ svc, station, query }) {
      if (!station.inbox.requests) throw new ModuleDisabledError('inbox requests');
      return requestableTracks(svc.db, station.id, station.inbox, query.q, query.limit ?? 20, svc.clock.now());
    },
  }),
  defineRoute({
    ...inbox,
    method: 'put',
    path: '/api/v1/stations/{stationSlug}/inbox/likes',
    operationId: 'putInboxLike',
    summary: 'Like or dislike the play on air now (0 withdraws the vote)',
    description:
      'One vote per client per play: the last one counts. 409 NOTHING_PLAYING when no track is on air (none, stopped, or stale).',
    params: StationSlugParams,
    body: PutLikeBody,
    bodyLimit: '4kb',
    responses: {
      200: { description: 'The vote and the play’s counts after it.', schema: VoteResult },
      ...refusals('Station unknown, inactive or offline; the inbox module or its likes switched off (MODULE_DISABLED).'),
      409: { description: 'NOTHING_PLAYING: no play is on air to vote on.', schema: ErrorBody },
    },
    async handler({ svc, station, body }) {
      return vote(svc, station, body.clientId, body.value as 1 | -1 | 0);
    },
  }),
  defineRoute({
    ...inbox,
    method: 'delete',
    path: '/api/v1/stations/{stationSlug}/inbox/clients/{clientId}',
    operationId: 'deleteInboxClient',
    summary: 'Erase a listener: every message and vote of this clientId at the station',
    description: 'The plays’ counts drop its votes. Answers 204 whether or not anything was stored.',
    params: ClientParams,
    responses: {
      204: { description: 'Erased.' },
      ...refusals('Station unknown, inactive or offline; the inbox module switched off (MODULE_DISABLED).'),
    },
    async handler({ ctx, svc, station, params }) {
      await eraseByClientId(svc, station.id, params.clientId);
      ctx.status = 204;
      return undefined;
    },
  }),
];
