import { ARTWORK_DEFAULTS, type ArtworkSetting } from './model.ts';

// The station's `artwork` setting as stored (stations.artwork, '{}' = the defaults); the station core's
// settings registry reads it with this (station.ts), so code holding a Station reads `station.artwork`.

export function artworkFromStored(stored: Partial<ArtworkSetting> | null | undefined): ArtworkSetting {
  return {
    minSize: typeof stored?.minSize === 'number' ? stored.minSize : ARTWORK_DEFAULTS.minSize,
    fallback: typeof stored?.fallback === 'boolean' ? stored.fallback : ARTWORK_DEFAULTS.fallback,
    stationImageVersionId: typeof stored?.stationImageVersionId === 'string' ? stored.stationImageVersionId : null,
  };
}
