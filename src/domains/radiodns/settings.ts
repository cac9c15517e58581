import type { Db } from '../../lib/db.ts';
import { ValidationError, type Issue } from '../../lib/errors.ts';
import { MIN_LOGO_SIZE, radiodnsFromStored, type RadioDns } from './model.ts';
import type { RadioDnsInput } from './schemas.ts';

// The `radiodns` setting's rules beyond its schema: what publishing needs, and the logo check
// (an uploaded image version of the station, at least 600×600, else 400: docs/radiodns.md#the-radiodns-station-setting).

const REQUIRED_WHEN_ENABLED = ['fqdn', 'serviceIdentifier', 'shortName', 'mediumName'] as const;

/** `input` merged into the stored block, normalised (host names and hex parts lower-case). */
export function mergeRadioDns(stored: Partial<RadioDns> | null | undefined, input: RadioDnsInput): RadioDns {
  const merged = radiodnsFromStored({ ...radiodnsFromStored(stored), ...input } as Partial<RadioDns>);
  return {
    ...merged,
    fqdn: merged.fqdn === null ? null : merged.fqdn.toLowerCase(),
    logoVersionId: merged.logoVersionId === null ? null : merged.logoVersionId.toLowerCase(),
    bearers: merged.bearers.map((b) => ({ id: b.id.toLowerCase(), cost: b.cost })),
  };
}

/** Throws 400 naming the field (under `pathPrefix`) when the merged setting cannot be published. */
export async function checkRadioDns(db: Db, stationId: string, radiodns: RadioDns, pathPrefix = 'radiodns'): Promise<void> {
  const issues: Issue[] = [];
  if (radiodns.enabled) {
    for (const key of REQUIRED_WHEN_ENABLED)
      if (radiodns[key] === null)
        issues.push({
          path: `${pathPrefix}.${key}`,
          code: 'required',
          message: `${pathPrefix}.${key} is required when radiodns is enabled`,
        });
  }
  const ids = radiodns.bearers.map((b) => b.id);
  ids.forEach((id, i) => {
    if (ids.indexOf(id) !== i)
      issues.push({ path: `${pathPrefix}.bearers.${i}.id`, code: 'invalid_value', message: `${pathPrefix}.bearers.${i}.id repeats ${id}` });
  });
  if (radiodns.logoVersionId !== null) {
    const issue = await logoIssue(db, stationId, radiodns.logoVersionId, `${pathPrefix}.logoVersionId`);
    if (issue) issues.push(issue);
  }
  if (issues.length) throw new ValidationError('Invalid radiodns setting.', issues);
}

async function logoIssue(db: Db, stationId: string, versionId: string, path: string): Promise<Issue | null> {
  const version = await db('media_versions')
    .where({ id: versionId, station_id: stationId })
    .first<{ kind: string; width: number | null; height: number | null } | undefined>('kind', 'width', 'height');
  if (!version || version.kind !== 'image')
    return { path, code: 'not_found', message: `${path} must be an uploaded image version of this station` };
  if ((version.width ?? 0) < MIN_LOGO_SIZE || (version.height ?? 0) < MIN_LOGO_SIZE)
    return {
      path,
      code: 'invalid_value',
      message: `${path} must be at least ${MIN_LOGO_SIZE}×${MIN_LOGO_SIZE} pixels (this one is ${version.width ?? 0}×${version.height ?? 0})`,
    };
  return null;
}
