import type { Services } from '../../services.ts';
import { storeRenditions } from './commands.ts';
import { findPublishedFile, findRenderSource } from './queries.ts';
import { renderSquareVariants, renderVariants } from './render.ts';
import { SQUARE_VARIANTS, type FileVariant } from './model.ts';

// A published image's `variants` are paths from its first delivery (docs/media.md#variants), so a
// rendition can be asked for before the worker's media.variants job stored it. It is rendered then, in
// this process, and stored exactly as the job would store it (the job later overwrites it with the same
// bytes). Concurrent requests for one version share one rendering.

const rendering = new Map<string, Promise<boolean>>();

/** Renders and stores a published image version's variants; false when the version is no published image. */
export function renderPublishedVariants(svc: Services, stationId: string, versionId: string, variant?: FileVariant): Promise<boolean> {
  const square = (SQUARE_VARIANTS as readonly string[]).includes(variant ?? '');
  const key = `${versionId}:${square ? 'square' : 'standard'}`;
  let pending = rendering.get(key);
  if (!pending) {
    pending = render(svc, stationId, versionId, square).finally(() => rendering.delete(key));
    rendering.set(key, pending);
  }
  return pending;
}

async function render(svc: Services, stationId: string, versionId: string, square: boolean): Promise<boolean> {
  if (!(await findPublishedFile(svc.db, stationId, versionId, 'original', -1))) return false;
  const source = await findRenderSource(svc, versionId);
  if (!source?.original || source.kind !== 'image' || source.stationId !== stationId) return false;
  // The square renditions (artwork, show images) are made the first time one is asked for.
  const renditions = square ? await renderSquareVariants(source.original) : await renderVariants(source.original, source.focal);
  await storeRenditions(svc, versionId, renditions, svc.clock.now());
  return true;
}
