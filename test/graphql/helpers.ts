import { request, type Reply } from '../support/http.ts';

/** POST a GraphQL document to a station's endpoint. */
export function gql(
  baseUrl: string,
  slug: string,
  token: string | undefined,
  query: string,
  variables?: Record<string, unknown>,
  headers: Record<string, string> = {},
): Promise<Reply> {
  return request(baseUrl, 'POST', `/api/v1/stations/${slug}/graphql`, {
    token,
    json: { query, variables },
    headers: { accept: 'application/json', ...headers },
  });
}

export function gqlGet(baseUrl: string, slug: string, token: string, params: Record<string, string>): Promise<Reply> {
  const search = new URLSearchParams(params).toString();
  return request(baseUrl, 'GET', `/api/v1/stations/${slug}/graphql?${search}`, { token, headers: { accept: 'application/json' } });
}
