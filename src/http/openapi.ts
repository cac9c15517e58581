import { sample } from 'openapi-sampler';
import randexpModule from 'randexp';
import type { TSchema } from '@sinclair/typebox';
import type { ResponseSpec, RouteSpec } from './routeSpec.ts';
import { ErrorBody } from './schema.ts';

// /openapi.json is generated from the same per-route schemas that validate input, so it cannot drift.
//
// Every request body and response schema is a named component referenced with $ref, so a generated
// client gets named types: a schema (or any schema nested in it) that carries a `title` is named by it
// (`Station`, `NowPlaying`, `Error`, …); an untitled top-level one is named after its operation
// (`HealthzResponse`, `CreateProgramRequest`). Routes added later are named the same way with no
// change here. Each response also carries an example, generated from its schema (openapi-sampler;
// a schema's own `examples` win).

const REF_PREFIX = '#/components/schemas/';

// CommonJS: module.exports is the class itself, while the typings describe it as the default export.
const RandExp = ((randexpModule as unknown as { default?: unknown }).default ?? randexpModule) as typeof randexpModule.default;

const pascal = (id: string): string => id.charAt(0).toUpperCase() + id.slice(1);

/** Plain JSON of a TypeBox schema (its symbol keys and `$id` dropped). */
function plain(schema: TSchema): Record<string, unknown> {
  return JSON.parse(JSON.stringify(schema, (key, value) => (key === '$id' ? undefined : value)));
}

class Components {
  readonly schemas: Record<string, unknown> = {};
  private readonly named = new Map<object, string>();

  /** `{$ref}` to `schema` as a component, named by its title or else `fallback`. */
  ref(schema: TSchema, fallback: string): { $ref: string } {
    return { $ref: REF_PREFIX + this.name(schema, fallback) };
  }

  private name(schema: TSchema, fallback: string): string {
    const known = this.named.get(schema);
    if (known) return known;
    const wanted = typeof schema.title === 'string' && /^[A-Za-z0-9_.-]+$/.test(schema.title) ? schema.title : fallback;
    const body = this.convert(schema, true) as Record<string, unknown>;
    const text = JSON.stringify(body);
    // Two different schemas with one title (or fallback) get `Name2`, `Name3`… rather than overwriting.
    let name = wanted;
    for (let n = 2; this.schemas[name] !== undefined && JSON.stringify(this.schemas[name]) !== text; n++) name = `${wanted}${n}`;
    this.schemas[name] = body;
    this.named.set(schema, name);
    return name;
  }

  /** The schema as JSON with every titled sub-schema replaced by a $ref. */
  private convert(node: unknown, top = false): unknown {
    if (Array.isArray(node)) return node.map((item) => this.convert(item));
    if (node === null || typeof node !== 'object') return node;
    const schema = node as TSchema;
    if (!top && typeof schema.title === 'string') return this.ref(schema, schema.title);
    const out: Record<string, unknown> = {};
    for (const [key, value] of Object.entries(schema)) {
      if (key === '$id') continue;
      // Keyword values that hold schemas are converted; `examples`, `enum`, `const`, `default` are data.
      out[key] = key === 'examples' || key === 'enum' || key === 'const' || key === 'default' ? value : this.convert(value);
    }
    return out;
  }
}

/**
 * A string matching `pattern` (randexp, always the first choice and the fewest repetitions, so the
 * document is the same on every build); undefined when none fits the length limits.
 */
function patternExample(pattern: string, minLength = 0, maxLength = Infinity): string | undefined {
  let regex: RegExp;
  try {
    regex = new RegExp(pattern, 'u');
  } catch {
    return undefined;
  }
  for (const pick of [(low: number) => low, (low: number, high: number) => Math.min(high, Math.max(low, minLength))]) {
    const generator = new RandExp(regex);
    generator.randInt = pick;
    const text = generator.gen();
    if (regex.test(text) && text.length >= minLength && text.length <= maxLength) return text;
  }
  return undefined;
}

/** Gives every string schema with a `pattern` and no example of its own one that matches it (openapi-sampler's own pattern support is partial). */
function withPatternExamples(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(withPatternExamples);
  if (node === null || typeof node !== 'object') return node;
  const schema = node as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(schema))
    out[key] = key === 'examples' || key === 'enum' || key === 'const' || key === 'default' ? value : withPatternExamples(value);
  if (
    typeof schema.pattern === 'string' &&
    !('examples' in schema) &&
    !('example' in schema) &&
    !('const' in schema) &&
    !('enum' in schema)
  ) {
    const text = patternExample(schema.pattern, (schema.minLength as number) ?? 0, (schema.maxLength as number) ?? Infinity);
    if (text !== undefined) out.examples = [text];
  }
  return out;
}

function example(schema: TSchema): unknown {
  try {
    return sample(withPatternExamples(plain(schema)) as never, { skipReadOnly: false, skipNonRequired: false, quiet: true } as never);
  } catch {
    return undefined;
  }
}

function parameters(route: RouteSpec): unknown[] {
  const out: unknown[] = [];
  for (const [where, schema] of [
    ['path', route.params],
    ['query', route.query],
  ] as const) {
    if (!schema) continue;
    const props = (schema as { properties?: Record<string, TSchema> }).properties ?? {};
    const required = new Set((schema as { required?: string[] }).required ?? []);
    for (const [name, prop] of Object.entries(props)) {
      const isArray = (prop as { type?: string }).type === 'array';
      out.push({
        name,
        in: where,
        // A parameter with a default is filled in by validation: the client need not send it.
        required: where === 'path' ? true : required.has(name) && prop.default === undefined,
        ...(prop.description ? { description: prop.description } : {}),
        schema: plain(prop),
        ...(isArray ? { style: 'form', explode: true } : {}),
      });
    }
  }
  return out;
}

const SECURITY: Record<string, unknown[]> = {
  listener: [{ bearer: [] }],
  push: [{ bearer: [] }],
  graphql: [{ bearer: [] }],
  ingest: [{ bearer: [] }],
  admin: [{ operator: [] }],
  media: [],
  system: [],
};

/**
 * Answers every route can give besides its own (docs/errors.md): a URL or body no route accepts
 * ("Hostile input"), and Postgres unreachable. The ingest route says them in its own shape.
 */
const EVERY_ROUTE: Record<string, ResponseSpec> = {
  400: {
    description: 'VALIDATION_ERROR: also a URL with NUL, invalid UTF-8 or a stray %, or a JSON body with NUL or unpaired surrogates.',
    schema: ErrorBody,
  },
  503: { description: 'PROVIDER_UNAVAILABLE: Postgres is unreachable; retry after `Retry-After` seconds.', schema: ErrorBody },
};

/** What every admin route may answer besides its own (docs/operations.md#operator-keys-and-the-audit-log). */
const ADMIN_REFUSALS: Record<string, ResponseSpec> = {
  401: { description: 'UNAUTHENTICATED: a missing, unknown, expired or revoked key (or a listener credential).', schema: ErrorBody },
  403: {
    description: 'FORBIDDEN: the operator key lacks the scope the call needs, or the call needs the root key (the message names which).',
    schema: ErrorBody,
  },
  429: {
    description:
      'RATE_LIMITED: ten failed admin authentications within a minute from this client address; retry after `Retry-After` seconds.',
    schema: ErrorBody,
  },
};

/** How an admin route's access reads in its description. */
const accessNote = (route: RouteSpec): string =>
  route.access?.scope === 'root'
    ? 'Root key (WAVELINE_ADMIN_TOKEN) only.'
    : `Root key, or an operator key with \`${route.access?.scope}\` reaching the station.`;

/** A route with a rate limit that does not describe its 429 itself (docs/errors.md, "Rate limits"). */
const RATE_LIMITED: ResponseSpec = {
  description: 'RATE_LIMITED: the credential’s bucket is empty; retry after `Retry-After` seconds (`RateLimit` says the same).',
  schema: ErrorBody,
};

const TAGS: Record<string, string> = {
  listener: 'Listener reads: a station credential with listener:read, JSON with a strong ETag.',
  push: 'Push device registration (a station credential with push:register).',
  graphql: 'The GraphQL endpoint over the same data as the listener reads.',
  ingest: 'Now-playing ingest from encoders and automation systems.',
  media: 'Published media bytes and image renditions (anonymous).',
  admin:
    'The operator API: the root key (WAVELINE_ADMIN_TOKEN) or an operator key (wvo_…) with the scope the operation names; every write is audited.',
  system: 'Health, this document, the reference page, the widget.',
  radiodns: 'RadioDNS SPI documents (ETSI TS 102 818) and station logos for hybrid radio receivers (anonymous, XML and PNG).',
  podcasts:
    'Podcast feeds of published episodes (RSS 2.0 for Apple Podcasts, Spotify and every podcast app; anonymous) and the cover image.',
  inbox:
    'The listener inbox: messages, dedications and song requests to the studio, likes of the play on air (a station credential with inbox:write), and the studio’s side (operator keys with inbox:read / inbox:write).',
};

export function buildOpenApi(routes: RouteSpec[], info: { version: string; serverUrl: string }): Record<string, unknown> {
  const components = new Components();
  const paths: Record<string, Record<string, unknown>> = {};
  const tags = new Set<string>();
  for (const route of routes) {
    const base = pascal(route.operationId);
    const responses: Record<string, unknown> = {};
    const declared = route.surface === 'admin' ? { ...ADMIN_REFUSALS, ...route.responses } : route.responses;
    const own = route.rateLimit && !declared[429] ? { ...declared, 429: RATE_LIMITED } : declared;
    const stated =
      route.surface === 'system' || route.surface === 'ingest'
        ? own
        : { ...own, ...Object.fromEntries(Object.entries(EVERY_ROUTE).filter(([status]) => !own[status])) };
    for (const [status, spec] of Object.entries(stated)) {
      let content: Record<string, unknown> | undefined;
      if (spec.schema) {
        const value = example(spec.schema);
        content = {
          [spec.contentType ?? 'application/json']: {
            schema: components.ref(spec.schema, `${base}${status === '200' ? '' : status}Response`),
            ...(value !== undefined ? { example: value } : {}),
          },
        };
      } else if (spec.contentType) {
        content = { [spec.contentType]: { schema: { type: 'string', format: 'binary' } } };
      }
      for (const [type, description] of Object.entries(spec.alsoAs ?? {}))
        content = { ...content, [type]: { schema: { type: 'string', description } } };
      if (route.page && status === '200')
        content = { ...content, 'text/html': { schema: { type: 'string', description: 'the browser page (Accept: text/html)' } } };
      responses[status] = { description: spec.description, ...(content ? { content } : {}) };
    }
    for (const tag of route.tags) tags.add(tag);
    const operation: Record<string, unknown> = {
      operationId: route.operationId,
      summary: route.summary,
      description:
        route.surface === 'admin' ? `${route.description ?? route.summary}\n\n${accessNote(route)}` : (route.description ?? route.summary),
      tags: route.tags,
      security: SECURITY[route.surface],
      parameters: parameters(route),
      responses,
    };
    if (route.scope) operation['x-waveline-scope'] = route.scope;
    if (route.module) operation['x-waveline-module'] = route.module;
    if (route.access) operation['x-waveline-operator-scope'] = route.access.scope;
    if (route.access?.action) operation['x-waveline-audit-action'] = route.access.action;
    if (route.body) {
      operation.requestBody = { required: true, content: { 'application/json': { schema: components.ref(route.body, `${base}Request`) } } };
    } else if (route.rawBody) {
      operation.requestBody = {
        required: true,
        content: { [route.rawBody]: { schema: { type: 'string', contentMediaType: 'application/octet-stream' } } },
      };
    }
    paths[route.path] ??= {};
    paths[route.path][route.method] = operation;
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'Waveline Station Delivery API',
      version: info.version,
      description: 'Listener reads, push registration, now-playing ingest and the operator admin API of Waveline.',
      license: { name: 'Proprietary', identifier: 'LicenseRef-Proprietary' },
    },
    servers: [{ url: info.serverUrl }],
    tags: [...tags].map((name) => ({ name, ...(TAGS[name] ? { description: TAGS[name] } : {}) })),
    paths,
    components: {
      schemas: components.schemas,
      securitySchemes: {
        bearer: { type: 'http', scheme: 'bearer', description: 'Station credential (wvl_…) with the scope the operation names.' },
        operator: {
          type: 'http',
          scheme: 'bearer',
          description:
            'The root key (WAVELINE_ADMIN_TOKEN: everything; alone manages operator keys, creates stations, imports bundles and reads the whole audit log) or an operator key (`wvo_` + 40 base62 characters, POST /admin/v1/operator-keys) limited to its stations and scopes (`x-waveline-operator-scope` on each operation).',
        },
      },
    },
  };
}
