import { LRUCache } from 'lru-cache';
import type { Services } from '../../services.ts';
import { readWholeFile } from '../media/queries.ts';
import type { Station } from '../stations/model.ts';
import { dhashOf } from './dhash.ts';
import type { ArtworkSetting } from './model.ts';

// The pictures that never show as track art: the station logo (the setting's image, else the RadioDNS
// logo) and the station's blocked images, by dHash.

/** dHash of an uploaded version, by version id (versions never change their bytes). */
const versionHashes = new LRUCache<string, string>({ max: 1000 });

export async function versionHash(svc: Pick<Services, 'db' | 'media'>, stationId: string, versionId: string): Promise<string | null> {
  const hit = versionHashes.get(versionId);
  if (hit) return hit;
  const image = await svc.db('media_versions').where({ id: versionId, station_id: stationId, kind: 'image' }).first('id');
  const original = image ? await readWholeFile(svc, versionId, 'original') : null;
  if (!original) return null;
  try {
    const hash = await dhashOf(original);
    versionHashes.set(versionId, hash);
    return hash;
  } catch {
    return null;
  }
}

export const logoVersionOf = (station: Pick<Station, 'radiodns'>, setting: ArtworkSetting): string | null =>
  setting.stationImageVersionId ?? station.radiodns.logoVersionId ?? null;

export async function blockedHashes(
  svc: Pick<Services, 'db' | 'media'>,
  station: Pick<Station, 'id' | 'radiodns'>,
  setting: ArtworkSetting,
): Promise<string[]> {
  const hashes: string[] = await svc.db('artwork_blocks').where({ station_id: station.id }).pluck('hash');
  const logo = logoVersionOf(station, setting);
  const logoHash = logo ? await versionHash(svc, station.id, logo) : null;
  return logoHash ? [logoHash, ...hashes] : hashes;
}
