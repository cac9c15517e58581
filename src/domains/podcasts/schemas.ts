import { Type, Nullable, KEY_PATTERN, type Static } from '../../http/schema.ts';
import { UUID_PATTERN } from '../../lib/ids.ts';
import { BundleMediaKey } from '../stations/settings.ts';

// The `podcasts` station setting as operators send it (admin POST/PATCH, import bundles) and as the admin
// view shows it. The rules beyond the schema (required when enabled, the episode type, the image, the
// language tag, Apple's categories) are in settings.ts.

const Text = (description: string) => Type.Optional(Nullable(Type.String({ minLength: 1, maxLength: 255, description })));

export const PodcastCategoryIn = Type.Object(
  {
    category: Type.String({ minLength: 1, maxLength: 100, description: 'a category of Apple Podcasts’ list', examples: ['Music'] }),
    subcategory: Type.Optional(
      Type.String({ minLength: 1, maxLength: 100, description: 'one of that category’s subcategories', examples: ['Music Commentary'] }),
    ),
  },
  { additionalProperties: false },
);

export const PodcastsInput = Type.Object(
  {
    enabled: Type.Optional(Type.Boolean({ description: 'publish podcast feeds (default false)' })),
    episodeType: Type.Optional(
      Nullable(
        Type.String({
          pattern: KEY_PATTERN,
          description: 'the content type whose published records are the episodes (needs a `title` text field and an `audio` media field)',
        }),
      ),
    ),
    author: Text('itunes:author'),
    ownerName: Text('itunes:owner name'),
    ownerEmail: Type.Optional(Nullable(Type.String({ format: 'email', maxLength: 320, description: 'itunes:owner email' }))),
    language: Type.Optional(
      Nullable(Type.String({ minLength: 2, maxLength: 35, description: 'BCP 47 language tag', examples: ['en-GB'] })),
    ),
    explicit: Type.Optional(Type.Boolean({ description: 'itunes:explicit of the channel and the items’ default (default false)' })),
    categories: Type.Optional(Type.Array(PodcastCategoryIn, { minItems: 1, maxItems: 3 })),
    imageVersionId: Type.Optional(
      Nullable(Type.String({ pattern: UUID_PATTERN, description: 'a square JPEG or PNG image version of the station, 1400–3000 px' })),
    ),
    copyright: Type.Optional(Nullable(Type.String({ minLength: 1, maxLength: 1000 }))),
  },
  {
    title: 'PodcastsSettingInput',
    additionalProperties: false,
    description:
      'Podcast feeds (docs/podcasts.md). Replaces the whole stored setting; enabled needs episodeType, author, ownerName, ownerEmail, language, categories and imageVersionId.',
  },
);
export type PodcastsInput = Static<typeof PodcastsInput>;

export const PodcastsOut = Type.Object(
  {
    enabled: Type.Boolean(),
    episodeType: Nullable(Type.String()),
    author: Nullable(Type.String()),
    ownerName: Nullable(Type.String()),
    ownerEmail: Nullable(Type.String()),
    language: Nullable(Type.String()),
    explicit: Type.Boolean(),
    categories: Type.Array(Type.Object({ category: Type.String(), subcategory: Type.Optional(Type.String()) })),
    imageVersionId: Nullable(Type.String()),
    copyright: Nullable(Type.String()),
  },
  { title: 'PodcastsSetting' },
);

/** The setting in an import bundle's station: `imageKey` names the bundle's media entry used as the cover. */
export const PodcastsBundle = Type.Object(
  { ...PodcastsInput.properties, imageKey: Type.Optional(BundleMediaKey) },
  {
    additionalProperties: false,
    description:
      'the podcasts setting, applied once the bundle’s types and media exist; `imageKey` names the bundle media entry used as the cover',
  },
);

/** The station document's `resources.podcast`. */
export const PodcastResource = Nullable(
  Type.String({ description: 'The absolute URL of the station’s podcast feed (RSS), or null when podcasts are off.' }),
);
