import { parse as parseLanguageTag } from 'bcp-47';
import type { Db } from '../../lib/db.ts';
import { ValidationError, type Issue } from '../../lib/errors.ts';
import type { FieldDefinition } from '../content/model.ts';
import { CATEGORY_NAMES, isAppleCategory } from './categories.ts';
import { ARTWORK_MAX, ARTWORK_MIN, ARTWORK_TYPES, podcastsFromStored, REQUIRED_WHEN_ENABLED, type Podcasts } from './model.ts';
import type { PodcastsInput } from './schemas.ts';

// The `podcasts` setting's rules beyond its schema (docs/podcasts.md#the-podcasts-station-setting): a PATCH replaces the
// whole object, and a missing required field (when enabled), an unknown type, a type without a `title`
// text field and an `audio` media field, an image that is not a square JPEG or PNG of 1400–3000 px, a
// bad language tag or a category not on Apple's list is 400 naming the field.

/** The setting as stored: what was sent, every other key at its default (PATCH replaces the whole object). */
export function podcastsFromInput(input: PodcastsInput): Podcasts {
  const setting = podcastsFromStored(input as Partial<Podcasts>);
  return { ...setting, imageVersionId: setting.imageVersionId === null ? null : setting.imageVersionId.toLowerCase() };
}

/**
 * Whether `tag` is a well-formed BCP 47 tag naming a language (`bcp-47`'s parser; a private-use tag alone
 * is not). The primary language subtag must be an ISO 639 code (2 or 3 letters): the 4-letter form is
 * reserved and the 5–8-letter one is for registered languages, of which the IANA registry holds none —
 * `english` is well-formed but names nothing.
 */
export function isLanguageTag(tag: string): boolean {
  const language = parseLanguageTag(tag).language;
  return language !== null && language !== undefined && language.length <= 3;
}

/** Throws 400 naming the field (under `pathPrefix`) when the setting breaks a rule. */
export async function checkPodcasts(db: Db, stationId: string, podcasts: Podcasts, pathPrefix = 'podcasts'): Promise<void> {
  const issues: Issue[] = [];
  const issue = (field: string, code: string, message: string) =>
    issues.push({ path: `${pathPrefix}.${field}`, code, message: `${pathPrefix}.${message}` });
  if (podcasts.enabled) {
    for (const key of REQUIRED_WHEN_ENABLED) {
      const value = podcasts[key];
      if (value === null || (Array.isArray(value) && value.length === 0))
        issue(key, 'required', `${key} is required when podcasts are enabled`);
    }
  }
  if (podcasts.language !== null && !isLanguageTag(podcasts.language))
    issue('language', 'invalid_format', `language must be a BCP 47 language tag such as "de" or "en-GB", got "${podcasts.language}"`);
  podcasts.categories.forEach(({ category, subcategory }, i) => {
    if (!isAppleCategory(category))
      issue(
        `categories.${i}.category`,
        'invalid_value',
        `categories.${i}.category must be one of Apple Podcasts’ categories (${CATEGORY_NAMES.join(', ')})`,
      );
    else if (!isAppleCategory(category, subcategory))
      issue(
        `categories.${i}.subcategory`,
        'invalid_value',
        `categories.${i}.subcategory "${subcategory}" is not a subcategory of ${category}`,
      );
  });
  if (podcasts.episodeType !== null) {
    const problem = await episodeTypeProblem(db, stationId, podcasts.episodeType);
    if (problem) issue('episodeType', problem.code, `episodeType ${problem.message}`);
  }
  if (podcasts.imageVersionId !== null) {
    const problem = await imageProblem(db, stationId, podcasts.imageVersionId);
    if (problem) issue('imageVersionId', problem.code, `imageVersionId ${problem.message}`);
  }
  if (issues.length) throw new ValidationError('Invalid podcasts setting.', issues);
}

type Problem = { code: string; message: string } | null;

async function episodeTypeProblem(db: Db, stationId: string, key: string): Promise<Problem> {
  const type = await db('content_types as t')
    .join('content_type_versions as v', (j) =>
      j.on('v.station_id', 't.station_id').andOn('v.key', 't.key').andOn('v.version', 't.current_version'),
    )
    .where({ 't.station_id': stationId, 't.key': key })
    .first<{ fields: FieldDefinition[] } | undefined>('v.fields');
  if (!type) return { code: 'not_found', message: `must name a content type of this station, not "${key}"` };
  const field = (k: string) => type.fields.find((f) => f.key === k);
  if (field('title')?.kind !== 'text' || field('audio')?.kind !== 'media')
    return { code: 'invalid_value', message: `"${key}" must have a \`title\` text field and an \`audio\` media field` };
  return null;
}

async function imageProblem(db: Db, stationId: string, versionId: string): Promise<Problem> {
  const version = await db('media_versions')
    .where({ id: versionId, station_id: stationId })
    .first<{ kind: string; mime: string; width: number | null; height: number | null } | undefined>('kind', 'mime', 'width', 'height');
  if (!version || version.kind !== 'image') return { code: 'not_found', message: 'must be an uploaded image version of this station' };
  if (!ARTWORK_TYPES[version.mime]) return { code: 'invalid_value', message: `must be a JPEG or PNG image (this one is ${version.mime})` };
  const { width, height } = { width: version.width ?? 0, height: version.height ?? 0 };
  if (width !== height) return { code: 'invalid_value', message: `must be square (this one is ${width}×${height})` };
  if (width < ARTWORK_MIN || width > ARTWORK_MAX)
    return { code: 'invalid_value', message: `must be ${ARTWORK_MIN} to ${ARTWORK_MAX} pixels square (this one is ${width}×${height})` };
  return null;
}
