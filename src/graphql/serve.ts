import type { Request as GraphQLHttpRequest } from 'graphql-http';
import type { Context } from 'koa';
import { MethodNotAllowedError } from '../lib/errors.ts';
import { graphqlKey, Representation, UnkeptAnswer } from '../lib/readCache.ts';
import { cacheLookup } from '../lib/metrics.ts';
import { onHandle } from '../lib/replicas/routing.ts';
import { isQueryOperation } from './documents.ts';
import type { WebServices } from '../services.ts';
import type { Station } from '../domains/stations/model.ts';
import type { Credential } from '../domains/auth/model.ts';
import type { GraphQLContext } from './context.ts';
import { handler, type Extra } from './handler.ts';
import { checkAccept, checkQueryParameters, readOperation } from './negotiation.ts';

const JSON_RESPONSE = 'application/json; charset=utf-8';

/**
 * Runs one GraphQL over HTTP request (GET queries only, POST queries and mutations).
 *
 * A response built only from cached reads is kept as bytes in the read cache (lib/readCache.ts) under
 * the request's method, Accept and Content-Type headers and query string (GET) or body (POST), with the
 * areas its reads showed and the earliest instant one of them changes: the same request then skips
 * parsing, execution and serialisation until a write to one of those areas or that instant.
 */
export async function serve(
  ctx: Context,
  svc: WebServices,
  station: Station,
  credential: Credential,
  query?: Record<string, unknown>,
): Promise<void> {
  checkAccept(ctx.get('accept'));
  // HEAD is GET without the body (Koa leaves the body out and keeps its length): the same operation and answer.
  const method = ctx.method === 'HEAD' ? 'GET' : ctx.method;
  let operation: Record<string, unknown> | null = null;
  if (method === 'POST') operation = await readOperation(ctx);
  else checkQueryParameters(query ?? {});
  // Only valid requests get here, so a hit is an answer this very operation had before.
  const key = graphqlKey(
    method,
    station.id,
    ctx.get('accept'),
    ctx.get('content-type'),
    operation ? JSON.stringify(operation) : ctx.querystring,
  );
  const nowMs = svc.clock.now().getTime();
  const hit = svc.reads.peek(key, nowMs);
  cacheLookup('graphql', hit !== undefined);
  if (hit !== undefined) return sendKept(ctx, hit);
  // A query (GET) the same as one running now waits for its answer — kept, while exact at this request's
  // time, or not kept (an error's: sent as it is); a mutation (POST) always runs.
  const isQuery = method === 'GET';
  const running = isQuery ? svc.reads.running(key, station.id) : undefined;
  if (running !== undefined) {
    const joined = await running.then(
      (rep) => (rep.validUntil > nowMs ? rep : undefined),
      (err: unknown) => (err instanceof UnkeptAnswer ? err : undefined),
    );
    if (joined instanceof UnkeptAnswer) return sendUnkept(ctx, joined);
    if (joined !== undefined) return sendKept(ctx, joined);
  }
  const flight = isQuery ? svc.reads.begin(key, station.id) : undefined;
  let shared: Representation | UnkeptAnswer | undefined;
  const generation = flight?.generation ?? svc.reads.generation(station.id);
  try {
    // With read replicas a query — over GET, or over POST when its operation is a query — reads where the
    // station's reads are routed (lib/replicas/routing.ts): a replica that has replayed its last write,
    // else the primary. A mutation reads and writes on the primary. A server error's answer (5xx) read on
    // a replica is read again on the primary: a replica never makes a listener read fail.
    const reads = isQuery || (operation !== null && isQueryOperation(operation));
    const replicas = reads ? svc.replicas : null;
    const choice = replicas === null ? null : await replicas.choose(station.id);
    if (choice !== null && choice.replica !== null) {
      shared = await execute(ctx, onHandle(svc, choice.handle), station, credential, operation, method, key, nowMs, generation, choice.lsn);
      // A request's own error (4xx, or a field's error the operation reports) is the primary's too.
      if (!(shared instanceof UnkeptAnswer) || shared.status < 500) return replicas!.count(choice);
      replicas!.count(choice, true);
      ctx.remove('Retry-After');
    } else if (choice !== null) replicas!.count(choice);
    shared = await execute(ctx, svc, station, credential, operation, method, key, nowMs, generation);
  } finally {
    flight?.end(shared);
  }
}

function sendKept(ctx: Context, rep: Representation): void {
  ctx.status = 200;
  ctx.set('Content-Type', rep.contentType);
  ctx.set('Cache-Control', 'no-store');
  ctx.body = rep.bytes;
}

/** The answer, not kept, of the same query's run this request waited for (an error's, a 503's in an outage). */
function sendUnkept(ctx: Context, answer: UnkeptAnswer): void {
  ctx.status = answer.status;
  ctx.set('Content-Type', answer.contentType);
  ctx.set('Cache-Control', 'no-store');
  if (answer.retryAfter !== undefined) ctx.set('Retry-After', answer.retryAfter);
  ctx.body = answer.bytes;
}

/**
 * Runs the operation and answers it; returns the answer it kept, or the answer it sent that is not kept
 * (an error's), for the requests waiting for this run.
 */
async function execute(
  ctx: Context,
  svc: WebServices,
  station: Station,
  credential: Credential,
  operation: Record<string, unknown> | null,
  method: string,
  key: string,
  nowMs: number,
  generation: number,
  readLsn?: bigint,
): Promise<Representation | UnkeptAnswer | undefined> {
  const context: GraphQLContext = {
    svc,
    station,
    credential,
    readLsn,
    previewGrant: ctx.get('x-preview-grant') || undefined,
    answer: { areas: new Set(), validUntil: Infinity },
  };
  const request: GraphQLHttpRequest<Context, Extra> = {
    method,
    url: ctx.url,
    headers: { get: (name: string) => ctx.get(name) || null },
    body: operation,
    raw: ctx,
    context: { svc, station, credential, result: context },
  };
  const [body, init] = await handler(request);
  // A mutation over GET: graphql-http's 405, in the shape of docs/errors.md#error-codes.
  if (init.status === 405) throw new MethodNotAllowedError('POST');
  ctx.status = context.status ?? init.status;
  for (const [name, value] of Object.entries(init.headers ?? {})) ctx.set(name, value);
  ctx.set('Cache-Control', 'no-store');
  const retryAfter = context.retryAfter !== undefined ? String(context.retryAfter) : undefined;
  if (retryAfter !== undefined) ctx.set('Retry-After', retryAfter);
  ctx.body = body ?? '';
  if (typeof body !== 'string' || body.length === 0) return undefined;
  const contentType = (init.headers as Record<string, string> | undefined)?.['content-type'] ?? JSON_RESPONSE;
  const answer = context.answer;
  if (!answer || ctx.status !== 200) return new UnkeptAnswer(ctx.status, Buffer.from(body), contentType, retryAfter);
  const kept = new Representation(Buffer.from(body), contentType, answer.validUntil);
  svc.reads.store(key, station.id, [...answer.areas], generation, kept, nowMs, readLsn);
  return kept;
}
