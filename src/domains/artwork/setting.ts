import type { Db } from '../../lib/db.ts';
import { ARTWORK_DEFAULTS, type ArtworkSetting } from './model.ts';

// The station's `artwork` setting as stored (stations.artwork, '{}' = the defaults). Read here until the
// stations core's feature-settings registry takes it over (docs/architecture.md, "A feature's station
// setting").

export function artworkFromStored(stored: Partial<ArtworkSetting> | null | undefined): ArtworkSetting {
  return {
    minSize: typeof stored?.minSize === 'number' ? stored.minSize : ARTWORK_DEFAULTS.minSize,
    fallback: typeof stored?.fallback === 'boolean' ? stored.fallback : ARTWORK_DEFAULTS.fallback,
    stationImageVersionId: typeof stored?.stationImageVersionId === 'string' ? stored.stationImageVersionId : null,
  };
}

export async function artworkSettingOf(db: Db, stationId: string): Promise<ArtworkSetting> {
  const row = await db('stations').where({ id: stationId }).first<{ artwork: Partial<ArtworkSetting> | null } | undefined>('artwork');
  return artworkFromStored(row?.artwork);
}
