// Every feature's station setting is registered before the station routes' schemas are built.
import './features.ts';
import type { RouteSpec } from './http/route.ts';
import { systemRoutes } from './domains/system/routes.ts';
import { stationRoutes } from './domains/stations/routes.ts';
import { credentialRoutes } from './domains/auth/routes.ts';
import { contentRoutes } from './domains/content/routes.ts';
import { scheduleRoutes } from './domains/schedule/routes.ts';
import { graphqlRoutes } from './graphql/routes.ts';
import { previewRoutes } from './domains/preview/routes.ts';
import { mediaRoutes } from './domains/media/routes.ts';
import { uploadRoutes } from './domains/media/uploadRoutes.ts';
import { pushDeviceRoutes } from './domains/push/devices/routes.ts';
import { pushCredentialRoutes } from './domains/push/providers/routes.ts';
import { pushNotificationRoutes } from './domains/push/notifications/routes.ts';
import { weatherRoutes } from './domains/weather/routes.ts';
import { nowPlayingRoutes } from './domains/nowPlaying/routes.ts';
import { adminRoutes } from './domains/admin/routes.ts';
import { embedRoutes } from './domains/embed/routes.ts';
import { webhookRoutes } from './domains/webhooks/routes.ts';
import { playLogRoutes } from './domains/nowPlaying/playLogRoutes.ts';
import { audienceRoutes } from './domains/audience/routes.ts';
import { radiodnsRoutes } from './domains/radiodns/routes.ts';
import { operatorKeyRoutes } from './domains/operatorKeys/routes.ts';
import { auditRoutes } from './domains/audit/routes.ts';
import { podcastRoutes } from './domains/podcasts/routes.ts';
import { artworkRoutes } from './domains/artwork/routes.ts';
import { reminderRoutes } from './domains/reminders/routes.ts';
import { inboxRoutes } from './domains/inbox/routes.ts';
import { inboxAdminRoutes } from './domains/inbox/adminRoutes.ts';
import { studioPageRoutes } from './domains/inbox/studioPage.ts';

// The composition of the web role's HTTP surface: every domain's routes, in one table. It lives beside
// services.ts (the other half of the composition), above the domains; src/http/ (the framework) never
// imports it except through the one-line shim src/http/routes.ts, kept until app.ts takes the table
// as a parameter.

/** Every HTTP route of the web role. /openapi.json is generated from this table. */
export const allRoutes: RouteSpec[] = [];
allRoutes.push(
  ...systemRoutes(() => allRoutes),
  ...stationRoutes,
  ...credentialRoutes,
  ...contentRoutes,
  ...scheduleRoutes,
  ...graphqlRoutes,
  ...previewRoutes,
  ...mediaRoutes,
  ...uploadRoutes,
  ...pushDeviceRoutes,
  ...pushCredentialRoutes,
  ...pushNotificationRoutes,
  ...weatherRoutes,
  ...nowPlayingRoutes,
  ...adminRoutes,
  ...embedRoutes,
  ...webhookRoutes,
  ...playLogRoutes,
  ...audienceRoutes,
  ...artworkRoutes,
  ...radiodnsRoutes,
  ...operatorKeyRoutes,
  ...auditRoutes,
  ...podcastRoutes,
  ...reminderRoutes,
  ...inboxRoutes,
  ...inboxAdminRoutes,
  ...studioPageRoutes,
);
