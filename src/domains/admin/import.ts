import { inTransaction, type Tx } from '../../lib/db.ts';
import { ConflictError, ValidationError, WavelineError, type Issue } from '../../lib/errors.ts';
import type { JobsOptions } from 'bullmq';
import type { JobName, JobPayload, Jobs } from '../../jobs.ts';
import type { Services } from '../../services.ts';
import { createStation, updateStation } from '../stations/commands.ts';
import { stationChange, stationChanged } from '../stations/changes.ts';
import { stationSettings } from '../stations/settings.ts';
import { presentAdminStation } from '../stations/presenter.ts';
import { createCredential } from '../auth/commands.ts';
import { saveContentType } from '../content/types.ts';
import { saveDraft } from '../content/records.ts';
import { publishRecord } from '../content/publish.ts';
import type { PutRecordBody } from '../content/schemas.ts';
import { createMediaVersion, discardFiles, storeBytes, type StoredFile } from '../media/commands.ts';
import { newId } from '../../lib/ids.ts';
import { inspectUpload, type Inspection } from '../media/inspect.ts';
import { MAX_UPLOAD_BYTES } from '../media/model.ts';
import { uploadMime } from '../media/upload.ts';
import { saveBroadcast, savePresenter, saveProgram, scheduleChanged, stationForWrite } from '../schedule/commands.ts';
import { saveRundown } from '../schedule/rundown.ts';
import { broadcastTimes, checkBundle, contentReferences, dependencyOrder, fieldsByType, mapReferences, rundownItems } from './bundle.ts';
import type { Bundle, ImportResult } from './schemas.ts';

// POST /admin/v1/import: a whole station from one bundle (docs/demo.md). Every part is written by
// the domain command the matching admin route uses, all inside ONE database transaction: a failing
// part rolls back everything, station included. What those commands send once they commit (feed
// frames, variant jobs, cache invalidations, schedule timers) is held until the import commits.

/** A domain error re-addressed into the bundle: `values.title` of record 3 becomes `records.3.values.title`. */
function relocate(err: unknown, prefix: string, rename: Record<string, string> = {}): unknown {
  if (!(err instanceof WavelineError)) return err;
  const place = (path: string) => {
    const renamed = rename[path] ?? path;
    return renamed ? `${prefix}.${renamed}` : prefix;
  };
  const issues: Issue[] = err.issues?.map((issue) => ({ ...issue, path: place(issue.path) })) ?? [
    { path: place(''), code: err.code.toLowerCase(), message: err.message },
  ];
  const message = `${prefix}: ${err.message}`;
  // Only a taken slug or id keeps its own status (409); everything else is something wrong in the bundle.
  return err instanceof ConflictError ? new ConflictError(message, issues) : new ValidationError(message, issues);
}

async function at<T>(prefix: string, write: () => Promise<T>, rename?: Record<string, string>): Promise<T> {
  try {
    return await write();
  } catch (err) {
    throw relocate(err, prefix, rename);
  }
}

/**
 * The services as the import's commands see them: their queries run in the import's transaction (a
 * command's own transaction becomes a savepoint in it), and the feed frames and jobs they would send
 * after their own commit wait for the import's commit. Those are logged, not thrown, when they fail
 * then: the data is durable (gateways catch up from the feed rows, the hourly sweep re-plans).
 */
function withinImport(svc: Services, tx: Tx): Services {
  const later = (what: string, send: () => Promise<unknown>) =>
    tx.afterCommit(() => send().catch((err: unknown) => svc.logger.error({ err }, `import: could not ${what} after commit`)));
  const jobs = Object.create(svc.jobs) as Jobs;
  // No job exists yet to hand back; the commands enqueue and move on without looking at it.
  const enqueue = <N extends JobName>(name: N, payload: JobPayload<N>, options?: JobsOptions): Promise<undefined> => {
    later(`enqueue ${name}`, () => svc.jobs.enqueue(name, payload, options));
    return Promise.resolve(undefined);
  };
  jobs.enqueue = enqueue as unknown as Jobs['enqueue'];
  // Webhook look-ups of the commands' events run in the import's transaction too: on another connection
  // they would wait for it on the embedded database (one session), e.g. a bundle publishing records
  // without a schedule (nothing else had cached the new station's webhooks yet).
  const webhooks = Object.create(svc.webhooks) as Services['webhooks'];
  webhooks.targets = (stationId, type, db = tx.trx) => svc.webhooks.targets(stationId, type, db);
  webhooks.wantsAny = (stationId, types, db = tx.trx) => svc.webhooks.wantsAny(stationId, types, db);
  // Each reading at least 1 ms after the previous one: publications in bundle order get increasing
  // `publishedAt` even when the clock stands still (a test clock) or several fall in one millisecond.
  let last = 0;
  const nowMs = () => (last = Math.max(svc.clock.nowMs(), last + 1));
  const clock = { now: () => new Date(nowMs()), nowMs };
  return {
    ...svc,
    db: tx.trx,
    clock,
    jobs,
    webhooks,
    bus: { publish: async (message) => later('publish a feed frame', () => svc.bus.publish(message)) },
  };
}

interface DecodedMedia {
  mime: string;
  bytes: Buffer;
  inspection: Inspection;
}

interface StoredMedia {
  mime: string;
  versionId: string;
  file: StoredFile;
  inspection: Inspection;
}

async function storeMedia(svc: Services, decoded: DecodedMedia[]): Promise<StoredMedia[]> {
  const stored: StoredMedia[] = [];
  try {
    for (const { mime, bytes, inspection } of decoded) {
      const versionId = newId();
      stored.push({ mime, versionId, inspection, file: await storeBytes(svc, versionId, 'original', mime, bytes) });
    }
  } catch (err) {
    await discardFiles(
      svc,
      stored.map((m) => m.file),
    );
    throw err;
  }
  return stored;
}

/** Decodes and inspects every media file before the transaction opens (sharp is slow); all issues at once. */
async function decodeMedia(media: NonNullable<Bundle['media']>): Promise<DecodedMedia[]> {
  const issues: Issue[] = [];
  const decoded: DecodedMedia[] = [];
  for (const [i, entry] of media.entries()) {
    const base64 = entry.data.replace(/\s+/g, '');
    if (!/^[A-Za-z0-9+/]*={0,2}$/.test(base64) || base64.length % 4 === 1) {
      issues.push({ path: `media.${i}.data`, code: 'invalid_format', message: `media.${i}.data must be base64` });
      continue;
    }
    const bytes = Buffer.from(base64, 'base64');
    if (bytes.length === 0) issues.push({ path: `media.${i}.data`, code: 'required', message: `media.${i}.data holds no bytes` });
    else if (bytes.length > MAX_UPLOAD_BYTES)
      issues.push({ path: `media.${i}.data`, code: 'too_big', message: `media.${i}.data is larger than ${MAX_UPLOAD_BYTES} bytes` });
    if (bytes.length === 0 || bytes.length > MAX_UPLOAD_BYTES) continue;
    try {
      const mime = await at(`media.${i}`, async () => uploadMime(entry.mime, ''), { 'headers.content-type': 'mime', '': 'mime' });
      const inspection = await at(`media.${i}`, () => inspectUpload(mime, bytes), { body: 'data', '': 'mime' });
      decoded.push({ mime, bytes, inspection });
    } catch (err) {
      if (!(err instanceof ValidationError)) throw err;
      issues.push(...(err.issues ?? []));
    }
  }
  if (issues.length) throw new ValidationError('Invalid media in the bundle.', issues);
  return decoded;
}

async function saveRecords(unit: Services, bundle: Bundle, stationId: string, versionIds: Map<string, string>, now: Date) {
  const records = bundle.records ?? [];
  const types = fieldsByType(bundle);
  const fieldsOf = (i: number) => types.get(records[i].type) ?? [];
  const index = new Map(records.map((r, i) => [r.id.toLowerCase(), i]));
  const toVersion = (key: unknown) => (typeof key === 'string' ? (versionIds.get(key) ?? key) : key);
  const bodies: PutRecordBody[] = records.map((r, i) => ({
    type: r.type,
    values: mapReferences(fieldsOf(i), r.values, 'media', toVersion),
    document: r.document,
    media: r.media?.map((ref) => ({ versionId: toVersion(ref.key ?? ref.versionId) as string })),
    related: r.related,
  }));
  // A record can reference only records that exist: referenced ones first. Records in a reference
  // cycle (and those behind one) first get a draft without their content references.
  const dependencies = records.map((r, i) =>
    contentReferences(fieldsOf(i), r.values, r.id.toLowerCase(), new Set(index.keys())).map((id) => index.get(id) as number),
  );
  const { ordered, rest } = dependencyOrder(dependencies);
  const save = (i: number, body: PutRecordBody) =>
    at(`records.${i}`, () => saveDraft(unit.db, { stationId, recordId: records[i].id, body, now }), { recordId: 'id' });
  for (const i of rest) await save(i, { ...bodies[i], values: mapReferences(fieldsOf(i), bodies[i].values, 'content', () => undefined) });
  const revisions = new Map<number, number>();
  for (const i of [...ordered, ...rest]) revisions.set(i, (await save(i, bodies[i])).revision);
  // Published in bundle order once every draft exists, so the last one listed is the newest.
  const out: ImportResult['records'] = [];
  for (const [i, record] of records.entries()) {
    const receipt = record.published
      ? await at(`records.${i}`, () => publishRecord(unit, { stationId, recordId: record.id.toLowerCase() }))
      : null;
    out.push({ id: record.id.toLowerCase(), revision: revisions.get(i) as number, publishedAt: receipt?.publishedAt ?? null });
  }
  return out;
}

async function saveSchedule(tx: Tx, svc: Services, bundle: Bundle, stationId: string, versionIds: ReadonlyMap<string, string>, now: Date) {
  const { presenters = [], programs = [], broadcasts = [], rundowns = [] } = bundle;
  const out = {
    presenters: [] as ImportResult['presenters'],
    programs: [] as ImportResult['programs'],
    broadcasts: [] as ImportResult['broadcasts'],
    rundowns: [] as ImportResult['rundowns'],
  };
  if (presenters.length + programs.length + broadcasts.length + rundowns.length === 0) return out;
  const { timezone } = await stationForWrite(tx, stationId);
  // `imageKey` names a bundle media entry: the version created for it is the picture.
  const image = (key: string | undefined, path: string) => (key === undefined ? null : bundleVersion(versionIds, key, `${path}.imageKey`));
  const rename = { imageVersionId: 'imageKey' };
  for (const [i, { id, imageKey, ...rest }] of presenters.entries()) {
    const body = { ...rest, imageVersionId: image(imageKey, `presenters.${i}`) };
    out.presenters.push({ id: (await at(`presenters.${i}`, () => savePresenter(tx, stationId, id, body, now), rename)).id });
  }
  for (const [i, { id, imageKey, ...rest }] of programs.entries()) {
    const body = { ...rest, imageVersionId: image(imageKey, `programs.${i}`) };
    await at(`programs.${i}`, () => saveProgram(tx, stationId, id, body, now), rename);
    out.programs.push({ id: id.toLowerCase() });
  }

  // A repeat names the broadcast it repeats, which must exist first.
  const index = new Map(broadcasts.map((b, i) => [b.id.toLowerCase(), i]));
  const { ordered, rest } = dependencyOrder(
    broadcasts.map((b) => (b.repeatOfId && index.has(b.repeatOfId.toLowerCase()) ? [index.get(b.repeatOfId.toLowerCase()) as number] : [])),
  );
  const times = broadcasts.map((b) => broadcastTimes(b, timezone, now));
  for (const i of [...ordered, ...rest]) {
    const { id, relative, ...body } = broadcasts[i];
    const rename: Record<string, string> = relative ? { startsAt: 'relative', endsAt: 'relative' } : {};
    await at(`broadcasts.${i}`, () => saveBroadcast(tx, stationId, id, { ...body, ...times[i] }, now), rename);
  }
  broadcasts.forEach((b, i) => out.broadcasts.push({ id: b.id.toLowerCase(), ...times[i] }));

  for (const [i, rundown] of rundowns.entries()) {
    const startsAt = times[index.get(rundown.broadcastId.toLowerCase()) as number].startsAt;
    const { items } = await at(
      `rundowns.${i}`,
      () => saveRundown(tx, stationId, rundown.broadcastId, { items: rundownItems(rundown.items, startsAt) }),
      { '': 'broadcastId' },
    );
    out.rundowns.push({ broadcastId: rundown.broadcastId.toLowerCase(), items: items.length });
  }
  await scheduleChanged(tx, svc, stationId, timezone);
  return out;
}

/** The version id of the bundle media entry `key`, or 400 at `path`. */
function bundleVersion(versionIds: ReadonlyMap<string, string>, key: string, path: string): string {
  const versionId = versionIds.get(key);
  if (!versionId)
    throw new ValidationError('Invalid bundle.', [
      { path, code: 'not_found', message: `${path} must name the key of a media entry of the bundle, not "${key}"` },
    ]);
  return versionId;
}

/**
 * Creates the bundle's station with everything in it, or nothing at all (400 naming the bundle path
 * of the first failing part, 409 when the slug or an id is taken). Returns the created credentials'
 * secrets, shown this once.
 */
export async function importBundle(svc: Services, bundle: Bundle): Promise<ImportResult> {
  const issues = checkBundle(bundle);
  if (issues.length) throw new ValidationError('Invalid bundle.', issues);
  const decoded = await decodeMedia(bundle.media ?? []);
  // The bytes go to the store before the transaction opens (its writes would wait for it on the
  // embedded database's one session), and are removed again when the import fails.
  const media = await storeMedia(svc, decoded);
  const now = svc.clock.now();
  return inTransaction(svc.db, async (tx) => {
    const unit = withinImport(svc, tx);
    // A feature's setting is written with the station, or (its bundle part says) once the bundle's
    // types and media exist, its media keys resolved to the versions created for them.
    const blocks: Record<string, unknown> = bundle.station;
    const settings = stationSettings().filter(({ key }) => blocks[key] !== undefined);
    const body = { ...blocks };
    for (const { key, bundle: part } of settings) {
      const atCreate = part ? part.atCreate(body[key]) : body[key];
      if (atCreate === undefined) delete body[key];
      else body[key] = atCreate;
    }
    let station = (await at('station', () => createStation(tx.trx, svc.invalidation, body as Bundle['station'], now))).after;
    tx.afterCommit(() => svc.invalidation.invalidate('station', station.id));

    const types: ImportResult['types'] = [];
    for (const [i, { key, ...body }] of (bundle.types ?? []).entries())
      types.push(await at(`types.${i}`, () => saveContentType(tx.trx, { stationId: station.id, key, body, now })));

    const versionIds = new Map<string, string>();
    const mediaOut: ImportResult['media'] = [];
    for (const [i, entry] of (bundle.media ?? []).entries()) {
      const { mime, versionId, file, inspection } = media[i];
      const receipt = await at(`media.${i}`, () =>
        createMediaVersion(unit, {
          stationId: station.id,
          mime,
          alt: entry.alt,
          credits: entry.credits,
          focalX: entry.focalX,
          focalY: entry.focalY,
          inspection,
          versionId,
          file,
        }),
      );
      versionIds.set(entry.key, receipt.versionId);
      mediaOut.push({ key: entry.key, ...receipt });
    }

    for (const { key, bundle: part } of settings) {
      const media = (mediaKey: string, field: string) => bundleVersion(versionIds, mediaKey, `station.${key}.${field}`);
      const write = part?.afterMedia(blocks[key], media);
      if (!write) continue;
      const rename = Object.fromEntries(Object.entries(write.rename ?? {}).map(([from, to]) => [`${key}.${from}`, `${key}.${to}`]));
      station = (await at('station', () => updateStation(tx.trx, svc.invalidation, station.id, { [key]: write.input }, now), rename)).after;
    }

    const schedule = await saveSchedule(tx, svc, bundle, station.id, versionIds, now);
    const records = await saveRecords(unit, bundle, station.id, versionIds, now);

    const credentials: ImportResult['credentials'] = [];
    for (const [i, body] of (bundle.credentials ?? []).entries()) {
      const { row, token } = await at(`credentials.${i}`, () =>
        createCredential(tx.trx, { stationId: station.id, scopes: body.scopes, label: body.label, expiresAt: body.expiresAt, now }),
      );
      credentials.push({ id: row.id, token, scopes: row.scopes, expiresAt: row.expires_at.toISOString(), label: row.label });
    }
    // The features follow the new station once everything is committed (RadioDNS renders its logo, the
    // feed gets its start rows), after the parts' own feed frames: registered last, it runs last, so the
    // station's frames go out in sequence order.
    tx.afterCommit(() => stationChanged(svc, stationChange(null, station)));
    return { station: presentAdminStation(station), credentials, types, media: mediaOut, records, ...schedule };
  }).catch(async (err: unknown) => {
    await discardFiles(
      svc,
      media.map((m) => m.file),
    );
    throw err;
  });
}
