import { ADMIN_TOKEN } from './env.ts';

export interface Reply<T = any> {
  status: number;
  headers: Headers;
  body: T;
  text: string;
}

/** A real HTTP request; JSON bodies are parsed when the response says JSON. */
export async function request<T = any>(
  baseUrl: string,
  method: string,
  path: string,
  options: { token?: string; headers?: Record<string, string>; json?: unknown; body?: string | Buffer } = {},
): Promise<Reply<T>> {
  const headers: Record<string, string> = { ...options.headers };
  if (options.token) headers.authorization = `Bearer ${options.token}`;
  let body: string | Buffer | undefined = options.body;
  if (options.json !== undefined) {
    headers['content-type'] ??= 'application/json';
    body = JSON.stringify(options.json);
  }
  const res = await fetch(baseUrl + path, { method, headers, body });
  const text = await res.text();
  let parsed: unknown = text;
  if ((res.headers.get('content-type') ?? '').includes('json') && text) parsed = JSON.parse(text);
  return { status: res.status, headers: res.headers, body: parsed as T, text };
}

export const admin = <T = any>(baseUrl: string, method: string, path: string, json?: unknown) =>
  request<T>(baseUrl, method, `/admin/v1${path}`, { token: ADMIN_TOKEN, json });
