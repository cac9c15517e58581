import type { RouteSpec } from './route.ts';
import { systemRoutes } from '../domains/system/routes.ts';
import { stationRoutes } from '../domains/stations/routes.ts';
import { credentialRoutes } from '../domains/auth/routes.ts';
import { nowPlayingRoutes } from '../domains/nowPlaying/routes.ts';

/** Every HTTP route of the web role. /openapi.json is generated from this table. */
export const allRoutes: RouteSpec[] = [];
allRoutes.push(...systemRoutes(() => allRoutes), ...stationRoutes, ...credentialRoutes, ...nowPlayingRoutes);
