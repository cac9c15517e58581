import { counter } from '../../lib/metrics.ts';

// Artwork's metric (docs/operations.md, "Metrics"; docs/now-playing.md, "Artwork you can trust"), listed
// in src/roles/metrics.ts.

export const artworkChecks = counter({
  name: 'waveline_artwork_checks_total',
  help: 'Artwork checks by source (operator, ingest, catalogue) and result: kept, or the reason it was refused.',
  labelNames: ['source', 'result'] as const,
});
