import { expect } from 'chai';
import { admin, request, type Reply } from '../../support/http.ts';

/** Creates an operator key with the root key; returns its id and secret. */
export async function createKey(
  baseUrl: string,
  body: { stations: string[] | '*'; scopes: string[]; label?: string; expiresAt?: string },
): Promise<{ id: string; key: string }> {
  const res = await admin(baseUrl, 'POST', '/operator-keys', { label: 'test key', ...body });
  expect(res.status, JSON.stringify(res.body)).to.equal(201);
  return { id: res.body.id, key: res.body.key };
}

/** An admin call with an operator key (or any bearer value). */
export const asKey = <T = any>(baseUrl: string, key: string, method: string, path: string, json?: unknown): Promise<Reply<T>> =>
  request<T>(baseUrl, method, `/admin/v1${path}`, { token: key, json });
