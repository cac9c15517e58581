import { LRUCache } from 'lru-cache';
import type { Db } from '../../lib/db.ts';
import type { Station } from '../stations/model.ts';
import { dhashOf } from './dhash.ts';
import type { ArtworkSetting } from './model.ts';

// The pictures that never show as track art: the station logo (the setting's image, else the RadioDNS
// logo) and the station's blocked images, by dHash.

/** dHash of an uploaded version, by version id (versions never change their bytes). */
const versionHashes = new LRUCache<string, string>({ max: 1000 });

export async function versionHash(db: Db, stationId: string, versionId: string): Promise<string | null> {
  const hit = versionHashes.get(versionId);
  if (hit) return hit;
  const file = await db('media_files as f')
    .join('media_versions as v', 'v.id', 'f.version_id')
    .where({ 'f.version_id': versionId, 'f.variant': 'original', 'v.station_id': stationId, 'v.kind': 'image' })
    .first<{ bytes: Buffer } | undefined>('f.bytes');
  if (!file) return null;
  try {
    const hash = await dhashOf(file.bytes);
    versionHashes.set(versionId, hash);
    return hash;
  } catch {
    return null;
  }
}

export const logoVersionOf = (station: Pick<Station, 'radiodns'>, setting: ArtworkSetting): string | null =>
  setting.stationImageVersionId ?? station.radiodns.logoVersionId ?? null;

export async function blockedHashes(db: Db, station: Pick<Station, 'id' | 'radiodns'>, setting: ArtworkSetting): Promise<string[]> {
  const hashes: string[] = await db('artwork_blocks').where({ station_id: station.id }).pluck('hash');
  const logo = logoVersionOf(station, setting);
  const logoHash = logo ? await versionHash(db, station.id, logo) : null;
  return logoHash ? [logoHash, ...hashes] : hashes;
}
