import type { MediaConfig } from '../../../config.ts';
import type { Db } from '../../../lib/db.ts';
import type { MediaStore, MediaStoreName } from '../store.ts';
import { FilesystemMediaStore } from './filesystem.ts';
import { PostgresMediaStore } from './postgres.ts';

// The stores of a process: `current` takes new files (chosen by configuration, src/config.ts); the
// others are opened when a file row names them (files stored before a change of store, or during
// `waveline media move`). The S3 SDK is loaded only when an s3 store is first used.

export class MediaStores {
  private readonly config: MediaConfig;
  private readonly db: Db;
  private readonly opened = new Map<MediaStoreName, Promise<MediaStore>>();

  constructor(config: MediaConfig, db: Db) {
    this.config = config;
    this.db = db;
  }

  get currentName(): MediaStoreName {
    return this.config.store;
  }

  /** The store new files go to. */
  current(): Promise<MediaStore> {
    return this.get(this.config.store);
  }

  get(name: MediaStoreName): Promise<MediaStore> {
    let store = this.opened.get(name);
    if (!store) {
      store = this.open(name);
      this.opened.set(name, store);
    }
    return store;
  }

  private async open(name: MediaStoreName): Promise<MediaStore> {
    if (name === 'postgres') return new PostgresMediaStore(this.db);
    if (name === 'filesystem') return new FilesystemMediaStore(this.config.dir);
    if (!this.config.s3.bucket) throw new Error('files are stored on S3, but MEDIA_S3_BUCKET is not set');
    const { S3MediaStore } = await import('./s3.ts');
    return new S3MediaStore(this.config.s3);
  }

  /**
   * The public URL of an object, when MEDIA_PUBLIC_BASE_URL is set (a CDN or public bucket in front of
   * the store) and its store can be served from there (not postgres); null otherwise.
   */
  async publicUrl(name: MediaStoreName, key: string): Promise<string | null> {
    if (!this.config.publicBaseUrl || name === 'postgres') return null;
    const path = (await this.get(name)).publicPath(key);
    return path === null ? null : `${this.config.publicBaseUrl}/${path.split('/').map(encodeURIComponent).join('/')}`;
  }

  async close(): Promise<void> {
    const stores = await Promise.allSettled(this.opened.values());
    for (const store of stores) if (store.status === 'fulfilled') await store.value.close();
  }
}
