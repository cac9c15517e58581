import type { Context, Middleware, Next } from 'koa';
import { createBullBoard } from '@bull-board/api';
import { BullMQAdapter } from '@bull-board/api/bullMQAdapter';
import { KoaAdapter } from '@bull-board/koa';
import { NotFoundError, UnauthenticatedError } from '../lib/errors.ts';
import { safeEqual } from '../lib/tokens.ts';
import type { FrameworkServices as Services } from './subjects.ts';

/** Where the queue dashboard is served (docs/operations.md, "Queues at a glance"). */
export const QUEUES_PATH = '/admin/queues';

/**
 * The BullMQ dashboard (@bull-board/koa, which runs on our Koa 3 and @koa/router 15) behind the operator
 * token: `Authorization: Bearer <WAVELINE_ADMIN_TOKEN>`, or HTTP Basic auth with the token as password so
 * a browser can open the page (it asks once and sends it with the page's assets and API calls).
 * Read-only unless QUEUE_DASHBOARD_WRITE=1: retry, promote, clean, pause and the like answer 405.
 * Built on the first authorised request. When the job system has no BullMQ queues (jobs run in-process)
 * it answers 404 NOT_FOUND saying so.
 */
export function queueDashboard(svc: Services): Middleware {
  let board: Middleware | null = null;
  return async (ctx: Context, next: Next) => {
    ctx.state.route = QUEUES_PATH;
    if (!isOperator(ctx, svc.config.adminToken)) {
      ctx.set('WWW-Authenticate', 'Basic realm="waveline queues", charset="UTF-8"');
      throw new UnauthenticatedError('A valid operator token is needed.');
    }
    if (!board) {
      const queues = svc.jobs.bullQueues();
      if (!queues) throw new NotFoundError('This process runs its jobs without BullMQ queues: there is no queue dashboard.');
      const adapter = new KoaAdapter();
      adapter.setBasePath(QUEUES_PATH);
      const readOnlyMode = !svc.config.observability.queueDashboardWrite;
      createBullBoard({
        queues: queues.map((queue) => new BullMQAdapter(queue, { readOnlyMode })),
        serverAdapter: adapter,
        options: { uiConfig: { boardTitle: 'Waveline queues' } },
      });
      board = adapter.registerPlugin() as unknown as Middleware;
    }
    return board(ctx, next);
  };
}

function isOperator(ctx: Context, expected: string): boolean {
  if (!expected) return false;
  const header = ctx.req.headers.authorization ?? '';
  const space = header.indexOf(' ');
  const scheme = header.slice(0, space).toLowerCase();
  const value = header.slice(space + 1).trim();
  if (scheme === 'bearer') return safeEqual(value, expected);
  if (scheme === 'basic') {
    const decoded = Buffer.from(value, 'base64').toString('utf8');
    return safeEqual(decoded.slice(decoded.indexOf(':') + 1), expected);
  }
  return false;
}
