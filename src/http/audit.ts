import type { Context } from 'koa';
import { runWithCommitHook, type CommitHook, type Trx } from '../lib/db.ts';
import { ProviderUnavailableError, WavelineError } from '../lib/errors.ts';
import { newId } from '../lib/ids.ts';
import type { AdminPrincipal } from './adminAccess.ts';
import type { AuditEntry, FrameworkServices as Services } from './subjects.ts';

// The audit trail (docs/operations.md#the-audit-log): one entry per admin write that
// passed authentication, stored before the answer leaves. Where the write is a database transaction the
// entry is one more statement in it (lib/db.ts `commitHooks`): change and entry commit or roll back
// together, and the entry costs one round trip. Otherwise (a write with no transaction of its own, or a
// refused one) it is stored on its own once the handler is done, before the answer; when it cannot be
// stored the answer is 503 PROVIDER_UNAVAILABLE. Never a body, a token or a secret: only what an
// `AuditEntry` (subjects.ts) holds.

/** An audit entry could not be stored: the write is refused (and its transaction rolled back). */
export class AuditUnavailableError extends ProviderUnavailableError {
  constructor(message = 'The audit log cannot be written; nothing was changed. Retry shortly.') {
    super(message);
  }
}

/** The resource a path names: its last parameter other than the station (`{recordId}`, `{key}`, …). */
function targetOf(params: Record<string, string> | undefined): string | null {
  if (!params) return null;
  const names = Object.keys(params).filter((name) => name !== 'stationId');
  return names.length > 0 ? params[names[names.length - 1]] : null;
}

/** A created resource's id, from what the command's transaction returned (`{id}`, `{row: {id}}` or `[{id}]`). */
function createdId(result: unknown): string | null {
  if (Array.isArray(result)) return result.length === 1 ? createdId(result[0]) : null;
  if (!result || typeof result !== 'object') return null;
  const { id, row } = result as { id?: unknown; row?: { id?: unknown } };
  if (typeof id === 'string') return id;
  return row && typeof row.id === 'string' ? row.id : null;
}

const statusOf = (err: unknown): number => (err instanceof WavelineError ? err.status : 500);

/**
 * The entry stored in the write's transaction carries the route's first documented success status: the
 * handler sets the answered one only after its transaction committed (`POST …/push/notifications`: 202 for
 * a new notification, 200 for its idempotent replay; an error after the commit). When the answer differs,
 * the entry is stored again with it (`record` of the same id replaces the status), before the answer. If
 * that fails, the change and its entry stay and the answer is the handler's: a 503 would tell the client
 * a committed write failed (a retried push would be sent twice); the error is logged with the entry's id.
 */
async function settleStatus(svc: Services, entry: AuditEntry, answered: number, action: string): Promise<void> {
  if (entry.status === answered) return;
  entry.status = answered;
  await svc.audit
    .record(null, entry)
    .catch((err: unknown) =>
      svc.logger.error({ err, action, auditId: entry.id, status: answered }, 'could not store the answered status of an audit entry'),
    );
}

/**
 * Runs an authenticated admin write (`work`: its authorization, validation and handler) and stores its
 * audit entry: in the first transaction the write commits, else on its own before the answer.
 */
export async function audited(
  svc: Services,
  ctx: Context,
  principal: AdminPrincipal,
  action: string,
  successStatus: number,
  work: () => Promise<unknown> | unknown,
): Promise<void> {
  const params = ctx.params as Record<string, string> | undefined;
  const entry: AuditEntry = {
    id: newId(),
    at: svc.clock.now(),
    keyId: principal.keyId,
    keyLabel: principal.keyLabel,
    method: ctx.method,
    path: ctx.path,
    stationId: params?.stationId ?? null,
    action,
    target: targetOf(params),
    status: successStatus,
    requestId: String(ctx.state.requestId ?? ''),
    clientIp: ctx.ip,
  };
  let stored = false;
  const hook: CommitHook = {
    wanted: true,
    async beforeCommit(trx: Trx, result: unknown) {
      entry.target ??= createdId(result);
      try {
        await svc.audit.record(trx, entry);
      } catch (err) {
        svc.logger.error({ err, action }, 'could not store an audit entry; the change is rolled back');
        throw new AuditUnavailableError();
      }
    },
    committed: () => {
      stored = true;
    },
  };
  try {
    await runWithCommitHook(hook, work);
  } catch (err) {
    hook.wanted = false;
    if (stored) await settleStatus(svc, entry, statusOf(err), action);
    else {
      entry.status = statusOf(err);
      await svc.audit
        .record(null, entry)
        .catch((failure: unknown) => svc.logger.error({ err: failure, action }, 'could not store an audit entry'));
    }
    throw err;
  }
  hook.wanted = false;
  if (stored) return settleStatus(svc, entry, ctx.status, action);
  entry.status = ctx.status;
  entry.target ??= createdId(ctx.body);
  try {
    await svc.audit.record(null, entry);
  } catch (err) {
    svc.logger.error({ err, action }, 'could not store an audit entry');
    ctx.body = undefined;
    throw new AuditUnavailableError('The audit log cannot be written. Retry shortly.');
  }
}
