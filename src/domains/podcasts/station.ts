import { registerStationSetting } from '../stations/settings.ts';
import { podcastResource, podcastsFromStored, type Podcasts } from './model.ts';
import { PodcastResource, PodcastsBundle, PodcastsInput, PodcastsOut } from './schemas.ts';
import { checkPodcasts, podcastsFromInput } from './settings.ts';

// How podcasts plug into the station (docs/architecture.md, "A feature's station setting"): the
// `podcasts` setting, stored in the `stations.podcasts` column, and the station document's
// `resources.podcast`. Registered by src/features.ts before the station schemas are built.

declare module '../stations/model.ts' {
  interface StationSettings {
    /** Podcast feeds (docs/podcasts.md#the-podcasts-station-setting); every key present. */
    podcasts: Podcasts;
  }
}

registerStationSetting({
  key: 'podcasts',
  column: 'podcasts',
  input: PodcastsInput,
  output: PodcastsOut,
  // PATCH replaces the whole podcasts object (docs/podcasts.md#the-podcasts-station-setting).
  patch: 'replace',
  fromStored: podcastsFromStored,
  fromInput: (input) => podcastsFromInput(input),
  check: (podcasts, { db, stationId }) => checkPodcasts(db, stationId, podcasts),
  resource: { name: 'podcast', schema: PodcastResource, present: (station, config) => podcastResource(station, config.publicBaseUrl) },
  bundle: {
    schema: PodcastsBundle,
    // The setting names the bundle's episode type and cover image: set once both exist.
    atCreate: () => undefined,
    afterMedia: ({ imageKey, ...podcasts }, media) =>
      imageKey === undefined
        ? { input: podcasts }
        : { input: { ...podcasts, imageVersionId: media(imageKey, 'imageKey') }, rename: { imageVersionId: 'imageKey' } },
  },
});
