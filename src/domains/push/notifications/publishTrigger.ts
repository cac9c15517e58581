import type { Services } from '../../../services.ts';
import type { Station } from '../../stations/model.ts';
import type { PublishNotify } from './schemas.ts';
import { notifyPublished } from './commands.ts';

// `notify` on publish (docs/push.md#sending): a `content` notification
// once per (record, revision); title defaults to the record's `values.title`, else the type's label;
// data carries {type, id, revision} and the slug when there is one. Never fails the publish.

export async function notifyOnPublish(
  svc: Services,
  station: Station,
  receipt: { id: string; revision: number },
  notify: PublishNotify,
): Promise<string | null> {
  try {
    const published = await svc.db('published_records').where({ record_id: receipt.id }).first('type', 'slug', 'delivered_values');
    if (!published) return null;
    const values = (published.delivered_values ?? {}) as Record<string, unknown>;
    const type = await svc.db('content_types').where({ station_id: station.id, key: published.type }).first('label');
    const title =
      notify.title ?? (typeof values.title === 'string' && values.title !== '' ? values.title : (type?.label ?? published.type));
    const data: Record<string, string> = { type: published.type, id: receipt.id, revision: String(receipt.revision) };
    if (typeof published.slug === 'string') data.slug = published.slug;
    return await notifyPublished(svc, station, {
      topic: 'content',
      source: 'content',
      recordId: receipt.id,
      recordRevision: receipt.revision,
      title: title.slice(0, 200),
      body: notify.body,
      url: notify.url,
      data,
      ttlSeconds: notify.ttlSeconds,
      collapseKey: notify.collapseKey,
    });
  } catch (err) {
    svc.logger.warn({ err, stationId: station.id, recordId: receipt.id }, 'could not create the publish notification');
    return null;
  }
}
