import type { Static, TSchema } from '@sinclair/typebox';
import { Type } from '../../http/schema.ts';
import type { Config } from '../../config.ts';
import type { Db } from '../../lib/db.ts';
import {
  DEFAULT_MODULES,
  MODULE_KEYS,
  type FeatureModules,
  type ModuleKey,
  type Modules,
  type SettingKey,
  type Station,
  type StationSettings,
  type StreamEntryFields,
} from './model.ts';

// The one seam through which a feature contributes a station setting (docs/architecture.md, "A feature's
// station setting"). The core owns the station entity and its routes; a feature registers what the core
// needs to store, validate, present and import its setting from a file in its own folder
// (podcasts/station.ts, radiodns/station.ts), and names the setting's type in model.ts's
// `StationSettings` by declaration merging. The composition (src/features.ts) imports every
// registration before anything builds the station schemas: schemas.ts reads the registry when it is
// loaded, and a registration after that throws instead of leaving a setting silently out.

/** Where a value is checked: the station's database (the command's transaction) and its id. */
export interface SettingCheck {
  db: Db;
  stationId: string;
}

/** A bundle-local name for a media file; a setting's bundle part names its media by it (`logoKey`). */
export const BundleMediaKey = Type.String({ pattern: '^[A-Za-z0-9._:-]{1,100}$', description: 'bundle-local media key' });

/** Resolves a bundle media key to the version id the import created for it, or 400 naming `field`. */
export type BundleMediaVersion = (mediaKey: string, field: string) => string;

/** The setting's values as a PATCH sends them (what it changes) and paths of its fields renamed for errors. */
export interface BundleWrite<Input> {
  input: Input;
  /** Field paths of the setting's errors as the bundle names them: `{logoVersionId: 'logoKey'}`. */
  rename?: Record<string, string>;
}

export interface StationSettingSpec<K extends SettingKey, In extends TSchema, Bundled extends TSchema> {
  /** The key in the station, the admin bodies and views, and the import bundle's station. */
  key: K;
  /** The `stations` column holding the stored form (jsonb). */
  column: string;
  /** The setting as POST/PATCH bodies take it (every field optional; the core makes the key optional). */
  input: In;
  /** The setting in the admin station view. */
  output: TSchema;
  /** PATCH semantics: `merge` the sent fields into what is stored, or `replace` the whole setting. */
  patch: 'merge' | 'replace';
  /** The stored block (possibly partial, null when never set) with every key present. */
  fromStored(stored: Partial<StationSettings[K]> | null | undefined): StationSettings[K];
  /** The value to store for `input`: `base` is what is stored (merge) or the default (replace, create). */
  fromInput(input: Static<In>, base: StationSettings[K]): StationSettings[K];
  /** Rules beyond the schema (may read the database): throws ValidationError naming `<key>.<field>`. */
  check?(value: StationSettings[K], at: SettingCheck): Promise<void>;
  /** A link the setting adds to the listener station document's `resources` (after `media`). */
  resource?: {
    name: string;
    schema: TSchema;
    present(station: Station, config: Pick<Config, 'publicBaseUrl'>): unknown;
  };
  /**
   * The setting in an import bundle's station (`POST /admin/v1/import`): its schema there (bundle media
   * keys in place of version ids), what is written with the station, and what once the bundle's types
   * and media exist. Without it, the bundle carries the setting as the POST body does, written at create.
   */
  bundle?: {
    schema: Bundled;
    atCreate(block: Static<Bundled>): Static<In> | undefined;
    afterMedia(block: Static<Bundled>, media: BundleMediaVersion): BundleWrite<Static<In>> | undefined;
  };
}

/** A registered setting as the core handles it (the feature's own types erased). */
export interface StationSetting {
  key: SettingKey;
  column: string;
  input: TSchema;
  output: TSchema;
  patch: 'merge' | 'replace';
  fromStored(stored: unknown): unknown;
  fromInput(input: unknown, base: unknown): unknown;
  check?(value: unknown, at: SettingCheck): Promise<void>;
  resource?: { name: string; schema: TSchema; present(station: Station, config: Pick<Config, 'publicBaseUrl'>): unknown };
  bundle?: {
    schema: TSchema;
    atCreate(block: unknown): unknown;
    afterMedia(block: unknown, media: BundleMediaVersion): BundleWrite<unknown> | undefined;
  };
}

export interface StreamFieldSpec<K extends keyof StreamEntryFields & string, In extends TSchema> {
  /** The key in each `profile.streamUrls[]` entry (after the core's fields). */
  key: K;
  /** The field as POST/PATCH bodies take it (the core makes it optional). */
  input: In;
  /** The field in the station document's and admin view's stream entries. */
  output: TSchema;
  /** The stored field (absent on entries written without it) as served, always present. */
  fromStored(stored: Static<In> | null | undefined): StreamEntryFields[K];
  /** Rules beyond the schema for each written entry: throws ValidationError naming `path` (`profile.streamUrls.{i}.{key}`). */
  check?(value: StreamEntryFields[K], at: SettingCheck & { path: string }): Promise<void>;
}

/** A registered stream entry field as the core handles it. */
export interface StreamField {
  key: string;
  input: TSchema;
  output: TSchema;
  fromStored(stored: unknown): unknown;
  check?(value: unknown, at: SettingCheck & { path: string }): Promise<void>;
}

const settings: StationSetting[] = [];
const streamFields: StreamField[] = [];
const featureModules: Array<{ key: string; default: boolean }> = [];
let built = false;

function open(what: string): void {
  if (built)
    throw new Error(
      `${what} registered after the station schemas were built: import its registration from src/features.ts, which the composition loads first`,
    );
}

/** Adds a feature's station setting; in the order of src/features.ts (the admin view's key order). */
export function registerStationSetting<K extends SettingKey, In extends TSchema, Bundled extends TSchema = In>(
  spec: StationSettingSpec<K, In, Bundled>,
): void {
  open(`station setting "${spec.key}"`);
  if (settings.some((s) => s.key === spec.key || s.column === spec.column))
    throw new Error(`station setting "${spec.key}" registered twice`);
  settings.push(spec as unknown as StationSetting);
}

/** Adds a feature's field to every `profile.streamUrls[]` entry. */
export function registerStreamField<K extends keyof StreamEntryFields & string, In extends TSchema>(spec: StreamFieldSpec<K, In>): void {
  open(`stream entry field "${spec.key}"`);
  if (streamFields.some((f) => f.key === spec.key)) throw new Error(`stream entry field "${spec.key}" registered twice`);
  streamFields.push(spec as unknown as StreamField);
}

/**
 * Adds a feature's module: a switch in the station's `modules` (admin bodies and view), gating the routes
 * that declare it (404 MODULE_DISABLED when off), with its default for stations that never set it.
 */
export function registerStationModule(spec: { key: keyof FeatureModules & string; default: boolean }): void {
  open(`station module "${spec.key}"`);
  if ((MODULE_KEYS as readonly string[]).includes(spec.key) || featureModules.some((m) => m.key === spec.key))
    throw new Error(`station module "${spec.key}" registered twice`);
  featureModules.push({ key: spec.key, default: spec.default });
}

/** Every module key: the core's, then the features' in registration order. Reading them closes the registry. */
export function stationModuleKeys(): readonly ModuleKey[] {
  built = true;
  return [...MODULE_KEYS, ...featureModules.map((m) => m.key as ModuleKey)];
}

/** Every module's default: the core's and the registered features'. */
export function moduleDefaults(): Modules {
  return { ...DEFAULT_MODULES, ...Object.fromEntries(featureModules.map((m) => [m.key, m.default])) } as Modules;
}

/** The registered settings, in registration order. Reading them closes the registry. */
export function stationSettings(): readonly StationSetting[] {
  built = true;
  return settings;
}

/** The registered stream entry fields, in registration order. Reading them closes the registry. */
export function stationStreamFields(): readonly StreamField[] {
  built = true;
  return streamFields;
}
