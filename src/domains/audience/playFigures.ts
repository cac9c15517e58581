import { registerPlayFigures, type PlayFigures } from '../nowPlaying/playFigures.ts';
import { computePerformances, totalOf, type ByStream } from './performances.ts';

// The play log's performances come from here (registered with nowPlaying/playFigures.ts; listed in
// src/features.ts): every stream key of the station (null when unknown), then any key a fixed figure
// holds for a stream since removed — its listeners were real and are part of the play's sum. A fixed
// play's figures are the stored ones; a play not fixed yet (on air, or ended less than a poll interval
// ago) is computed from the samples now, one statement per batch.

registerPlayFigures(async ({ db, config, now }, station, plays) => {
  const streams = station.profile.streamUrls ?? [];
  const unknown = (): ByStream => Object.fromEntries(streams.map((s) => [s.key, null]));
  const stored = await db('play_performances')
    .whereRaw('observation_id = ANY(?::uuid[])', [plays.map((p) => p.id)])
    .select<Array<{ observation_id: string; by_stream: ByStream; performances: number | null }>>(
      'observation_id',
      'by_stream',
      'performances',
    );
  const figures = new Map<string, PlayFigures>();
  for (const row of stored) figures.set(row.observation_id, { total: row.performances, byStream: { ...unknown(), ...row.by_stream } });
  const open = plays.filter((play) => !figures.has(play.id));
  const live = await computePerformances(db, station.id, streams, open, config.audience.pollSeconds, now);
  for (const play of open) {
    const byStream = { ...unknown(), ...live.get(play.id) };
    figures.set(play.id, { total: totalOf(byStream), byStream });
  }
  return figures;
});
