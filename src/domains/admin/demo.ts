import { readFile } from 'node:fs/promises';
import { ConflictError } from '../../lib/errors.ts';
import { validate } from '../../http/validate.ts';
import type { Services } from '../../services.ts';
import { importBundle } from './import.ts';
import { Bundle, type ImportResult } from './schemas.ts';

// The demo station `waveline dev` loads into an empty database (docs/demo.md). The bundle is plain
// data in the repository, imported through the same path as POST /admin/v1/import.

export const DEMO_BUNDLE = new URL('../../../demo/bundle.json', import.meta.url);

/**
 * Imports the demo bundle when the database holds no station at all; null when it holds one (the
 * developer's own data is never touched), or when another process loaded the demo a moment earlier.
 */
export async function loadDemoIfEmpty(svc: Services, file: URL = DEMO_BUNDLE): Promise<ImportResult | null> {
  if (await svc.db('stations').first('id')) return null;
  const bundle = validate<Bundle>(Bundle, 'body', JSON.parse(await readFile(file, 'utf8')));
  try {
    return await importBundle(svc, bundle);
  } catch (err) {
    if (err instanceof ConflictError) return null;
    throw err;
  }
}

/**
 * The one place Waveline prints a secret: the fresh credentials of the developer's own local demo,
 * once, when they were created. They are in the message on purpose (structured `token` fields are
 * redacted by the logger).
 */
export function demoCredentialsBlock(result: ImportResult, publicBaseUrl: string): string {
  const { slug, name, id } = result.station;
  const token = (scope: string) => result.credentials.find((c) => c.scopes.includes(scope))?.token ?? '(none)';
  const rule = '─'.repeat(72);
  return [
    'demo credentials',
    rule,
    `The database was empty, so the demo station "${name}" (slug ${slug}, id ${id}) was loaded`,
    'from demo/bundle.json. Its credentials exist only in this local database and are shown once, now:',
    '',
    ...result.credentials.map((c) => `  ${c.scopes.join(' ').padEnd(15)} ${c.token}`),
    '',
    'Try:',
    `  curl -H "Authorization: Bearer ${token('listener:read')}" ${publicBaseUrl}/api/v1/stations/${slug}`,
    `  curl -H "Authorization: Bearer ${token('listener:read')}" ${publicBaseUrl}/api/v1/stations/${slug}/broadcast/current`,
    `  curl -H "Authorization: Bearer ${token('ingest:write')}" -H "Content-Type: application/json" \\`,
    `       -d '{"artist":"Lumen Fields","title":"Northern Lights"}' "${publicBaseUrl}/api/v1/integrations/playback?stationSlug=${slug}"`,
    `  curl ${publicBaseUrl}/radiodns/spi/3.1/SI.xml   (RadioDNS Service Information: no credential, docs/radiodns.md)`,
    `  curl ${publicBaseUrl}/podcasts/${slug}/feed.xml   (the podcast feed: no credential, docs/podcasts.md)`,
    'Admin calls with a key of only the scopes they need (docs/operations.md, "Operator keys"), e.g. an editor:',
    `  waveline keys create --label "Demo editor" --stations ${id} --scopes content:write,schedule:write`,
    `  waveline admin --key wvo_… PUT /stations/${id}/presenters/<uuid> '{"title":"Ada"}'`,
    `Lost the credentials? A key with credentials:write makes new ones:`,
    `  waveline keys create --label "Demo credentials" --stations ${id} --scopes credentials:write`,
    `  waveline admin --key wvo_… POST /stations/${id}/credentials '{"scopes":["listener:read"]}'`,
    'Skip the demo: WAVELINE_DEMO=0 (docs/demo.md).',
    rule,
  ].join('\n');
}
