import { defineRoute } from '../../../http/route.ts';
import { ErrorBody, StationSlugParams } from '../../../http/schema.ts';
import { NotFoundError } from '../../../lib/errors.ts';
import { StationIdParams } from '../../stations/schemas.ts';
import { registerDevice, unregisterDevice, updateTopics } from './commands.ts';
import { presentAck, presentDeviceCount } from './presenter.ts';
import { countDevices } from './queries.ts';
import { DeviceCount, PushAck, RegisterDeviceBody, UnregisterDeviceBody, UpdateTopicsBody } from './schemas.ts';

// Listener push-device registration (docs/push.md#routes).
// Gates: station (404) → credential push:register (401) → rate limit 'push' (429) → module push (404
// MODULE_DISABLED) → body (400). Answers are plain JSON `{ok: true}` without an ETag layer.

const PATH = '/api/v1/stations/{stationSlug}/push/devices';

const push = {
  tags: ['push'],
  surface: 'push' as const,
  station: 'slug' as const,
  scope: 'push:register' as const,
  rateLimit: 'push' as const,
  module: 'push' as const,
  params: StationSlugParams,
};

const pushErrors = {
  400: { description: 'Invalid body (VALIDATION_ERROR with issues and suggestions).', schema: ErrorBody },
  401: { description: 'Credential missing or invalid (scope push:register).', schema: ErrorBody },
  404: { description: 'Station unknown, inactive or offline; push module switched off (MODULE_DISABLED).', schema: ErrorBody },
  429: { description: 'Rate limited.', schema: ErrorBody },
};

const ok = { 200: { description: 'Done; the status is the result.', schema: PushAck } };

export const pushDeviceRoutes = [
  defineRoute({
    ...push,
    method: 'post',
    path: PATH,
    operationId: 'registerPushDevice',
    summary: 'Register a push device, or refresh an existing registration of the same token',
    description:
      'A first registration gets topics {alerts: true, content: true} unless `topics` says otherwise; registering a known token again refreshes platform, provider and updatedAt instead of duplicating it.',
    body: RegisterDeviceBody,
    responses: {
      ...ok,
      ...pushErrors,
      409: { description: 'PROVIDER_MISMATCH: the station has no push provider configured, or another one.', schema: ErrorBody },
    },
    async handler({ svc, station, body }) {
      await registerDevice(svc.db, { station, body, now: svc.clock.now() });
      return presentAck();
    },
  }),
  defineRoute({
    ...push,
    method: 'patch',
    path: PATH,
    operationId: 'updatePushTopics',
    summary: 'Change the listed topics of a registered device',
    description:
      'Topics not named keep their setting; turning a topic off keeps the token registered. `topics: {}` changes nothing and answers 200 (the token must still be registered).',
    body: UpdateTopicsBody,
    responses: {
      ...ok,
      ...pushErrors,
      404: { description: 'Station unavailable, push module switched off, or the token is not registered.', schema: ErrorBody },
    },
    async handler({ svc, station, body }) {
      const found = await updateTopics(svc.db, { stationId: station.id, token: body.token, topics: body.topics, now: svc.clock.now() });
      if (!found) throw new NotFoundError('This device token is not registered for the station.');
      return presentAck();
    },
  }),
  defineRoute({
    ...push,
    method: 'delete',
    path: PATH,
    operationId: 'unregisterPushDevice',
    summary: 'Unregister a device (success even if the token was not registered)',
    body: UnregisterDeviceBody,
    responses: { ...ok, ...pushErrors },
    async handler({ svc, station, body }) {
      await unregisterDevice(svc.db, { stationId: station.id, token: body.token });
      return presentAck();
    },
  }),
  defineRoute({
    method: 'get',
    path: '/admin/v1/stations/{stationId}/push/devices/count',
    operationId: 'adminCountPushDevices',
    access: { scope: 'push:send' },
    summary: 'How many devices are registered, by platform and by topic switched on',
    tags: ['admin'],
    surface: 'admin',
    params: StationIdParams,
    responses: {
      200: { description: 'Counts (tokens are never shown).', schema: DeviceCount },
      401: { description: 'Missing or invalid operator token.', schema: ErrorBody },
      404: { description: 'Station not found.', schema: ErrorBody },
    },
    async handler({ svc, params }) {
      const station = await svc.stations.require(params.stationId);
      return presentDeviceCount(await countDevices(svc.db, station.id));
    },
  }),
];
