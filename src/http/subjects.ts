// What the framework knows of the station, credential, scope and module a route is gated by — without
// importing a domain. The domains fill the registry in by declaration merging (as Koa's DefaultState
// and Fastify's request decorations are), so handlers still get the domains' full types:
//
//   declare module '../../http/subjects.ts' { interface RouteSubjects { station: Station } }
//
// Unregistered, each falls back to the little the gates themselves read.

/** Filled in by the domains (stations/model.ts, auth/model.ts). */
export interface RouteSubjects {}

type Subject<K extends string, Fallback> = RouteSubjects extends Record<K, infer T> ? T : Fallback;

/** What the station gate and the module gate read of a station. */
export interface GatedStation {
  id: string;
  active: boolean;
  publicOnline: boolean;
  modules: Readonly<Record<string, boolean>>;
}

/** What the credential gate reads of a credential. */
export interface GatedCredential {
  id: string;
  stationId: string;
  scopes: readonly string[];
  expiresAt: Date;
  revokedAt: Date | null;
}

export type RouteStation = Subject<'station', GatedStation>;
export type RouteCredential = Subject<'credential', GatedCredential>;
export type RouteScope = Subject<'scope', string>;
export type RouteModuleKey = Subject<'moduleKey', string>;

/** A station listeners can reach: active and publicly online (anything else answers 404). */
export const isPublic = (station: Pick<GatedStation, 'active' | 'publicOnline'>): boolean => station.active && station.publicOnline;
