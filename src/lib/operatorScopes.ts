// The operator-key scopes (docs/operations.md#operator-keys-and-the-audit-log), and what an admin route
// declares beside itself (route.ts `access`): the scope it needs — or `root`, the WAVELINE_ADMIN_TOKEN
// alone — and, for a write, the audit action its entries carry.

export const OPERATOR_SCOPES = [
  'stations:write',
  'credentials:write',
  'content:write',
  'schedule:write',
  'feeds:write',
  'push:credentials',
  'push:send',
  'webhooks:write',
  'plays:read',
  'audit:read',
  'artwork:write',
  'inbox:read',
  'inbox:write',
] as const;
export type OperatorScope = (typeof OPERATOR_SCOPES)[number];

/** What an admin route needs and what its audit entries say (a write must name its `action`). */
export interface AdminAccess {
  /** The operator-key scope a call needs (a GET: that area's scope), or `root`: the root key alone. */
  scope: OperatorScope | 'root';
  /** Writes: the audit action, `<area>.<verb>` (e.g. `content.publish`, `push.send`). */
  action?: string;
}
