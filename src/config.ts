// Every environment variable Waveline reads, parsed once, synchronously, at boot.
// A bad value stops the process with a message naming the variable.

export interface Config {
  /** Postgres connection string; empty (unset) means the embedded PGlite in `<dataDir>/db`. */
  databaseUrl: string;
  /**
   * Streaming replicas of `databaseUrl` that listener reads may use (docs/operations.md#postgres-read-replicas);
   * empty: every read on the primary.
   */
  databaseReplicaUrls: readonly string[];
  /** A replica replaying further behind than this many seconds is skipped until it catches up. */
  databaseReplicaMaxLagSeconds: number;
  /** Redis connection string (feed bus, job queue, caches, rate limiter); empty (unset) means in-process. */
  redisUrl: string;
  /** Where the embedded default keeps its data (`./.waveline`, relative to the working directory). */
  dataDir: string;
  /** Port of the web role (and of a gateway run alone). */
  port: number;
  /** Port of the gateway when it runs in the same process as web (`waveline dev`). */
  gatewayPort: number;
  /** Address listeners and apps reach the web role on; used to build absolute links. */
  publicBaseUrl: string;
  /** Address of the realtime gateway as listeners see it (`wss://…` in production). */
  realtimePublicUrl: string;
  /** Operator secret for `/admin/v1`. Empty disables the admin API. */
  adminToken: string;
  /** HMAC key for cursors and preview grants. */
  secret: string;
  /** pino level. */
  logLevel: string;
  /** `production` logs JSON; anything else pretty-prints when stdout is a TTY. */
  nodeEnv: string;
  /** Token-bucket sizes per minute; 0 switches that limit off. */
  rateLimits: {
    listener: number;
    graphql: number;
    push: number;
    ingest: number;
    anonymous: number;
    /** Failed admin authentications one client address may make a minute (ten: docs/operations.md#operator-keys-and-the-audit-log). */
    adminFailures: number;
  };
  /** Gateway limits. */
  gateway: {
    /** Open feed connections one client IP may hold on one gateway node. */
    maxConnectionsPerIp: number;
    /** Bytes a slow client may have buffered before it is closed (it reconnects and gets the current state). */
    maxBackpressureBytes: number;
    /** Seconds without traffic before a peer counts as dead; pings go out well before. */
    idleTimeoutSeconds: number;
    /** Largest frame a client may send (clients have nothing to say; larger frames close the connection). */
    maxMessageBytes: number;
  };
  /**
   * Proxies in front of web and gateway that append the address they saw to X-Forwarded-For (a Heroku-style
   * router: 1). The client address is that many entries from the right; 0 uses the socket address and
   * ignores the header (direct exposure). Per-IP limits key on it, so a client cannot pick its own bucket.
   */
  trustedProxyHops: number;
  /**
   * `waveline dev` loads the demo station (demo/bundle.json) into a database that has no stations and
   * prints its fresh credentials once. `WAVELINE_DEMO=0` skips that; other roles never load it.
   */
  demo: boolean;
  /** Per-operation GraphQL limits; an operation past one is refused with VALIDATION_ERROR before it runs. */
  graphql: {
    /** Deepest selection nesting. */
    maxDepth: number;
    /** Aliased fields in one operation. */
    maxAliases: number;
    /** Cost budget: objects 2, scalars 1, each level of nesting ×1.5 (GraphQL Armor's cost rule). */
    maxCost: number;
  };
  /** Byte budget of the listener reads' answers kept in memory per web process (lib/readCache.ts); 0 keeps none. */
  readCacheMaxBytes: number;
  /** Observability (docs/operations.md): Prometheus metrics, per-request log lines, the worker's HTTP port. */
  observability: {
    /** Collect metrics and serve `/metrics` (`METRICS=0` switches both off). */
    metrics: boolean;
    /** Bearer token `/metrics` asks for; empty serves it to anyone who reaches the port. */
    metricsToken: string;
    /** One log line per HTTP request of the web role (`REQUEST_LOG=0` switches them off). */
    requestLog: boolean;
    /** Port of the worker's `/healthz`, `/readyz` and `/metrics`. */
    workerPort: number;
    /** Seconds a worker's lock on a job lasts: a killed worker's jobs are taken over after about this long. */
    workerLockSeconds: number;
    /** The queue dashboard (`/admin/queues`) may retry, promote and clean jobs; read-only otherwise. */
    queueDashboardWrite: boolean;
  };
  /** Third-party artwork catalogues (base URLs so tests can point them at a local server). */
  artwork: {
    itunesBaseUrl: string;
    musicbrainzBaseUrl: string;
    coverArtBaseUrl: string;
    timeoutMs: number;
    /** Who to contact about our requests (URL or e-mail), sent in the User-Agent as MusicBrainz asks. */
    contact: string;
  };
  /** Audience (docs/audience.md#the-poller). */
  audience: {
    /** Seconds between polls of every stream's listener count, 10–300 (`AUDIENCE_POLL_SECONDS`, default 30). */
    pollSeconds: number;
  };
  /** Webhooks: `WEBHOOKS_ALLOW_INSECURE=1` allows http:// and local addresses (development and tests only). */
  webhooks: { allowInsecure: boolean };
  /** Where media bytes live and how large uploads may be (docs/media.md#stores). */
  media: MediaConfig;
  /** Push delivery (docs/push.md#pacing, docs/push.md#provider-wire-formats). Base URLs are for tests and proxies. */
  push: {
    /** FCM HTTP v1 base URL (`PUSH_FCM_URL`); http:// allowed. */
    fcmUrl: string;
    /** APNs production base URL (`PUSH_APNS_URL`): HTTP/2 over TLS. */
    apnsUrl: string;
    /** APNs base URL for stations whose key is for the sandbox (`PUSH_APNS_SANDBOX_URL`). */
    apnsSandboxUrl: string;
    /** Expo push API base URL (`PUSH_EXPO_URL`); http:// allowed. */
    expoUrl: string;
    /** Messages a second per station across all workers (`PUSH_MAX_PER_SECOND`). */
    maxPerSecond: number;
    /** The same for stations sending through Expo (`PUSH_EXPO_MAX_PER_SECOND`, Expo's documented 600/s). */
    expoMaxPerSecond: number;
    /** Seconds after an Expo batch before its receipts are fetched (`PUSH_EXPO_RECEIPT_DELAY_SECONDS`). */
    expoReceiptDelaySeconds: number;
    /** Seconds one provider request may take; a request without an answer counts `failed` (`PUSH_REQUEST_TIMEOUT_SECONDS`). */
    requestTimeoutSeconds: number;
    /** Provider requests one notification job keeps in flight (`PUSH_CONCURRENCY`). */
    concurrency: number;
  };
}

export type MediaStoreName = 'postgres' | 'filesystem' | 's3';

export interface MediaConfig {
  /**
   * The store new uploads go to: `s3` when MEDIA_S3_BUCKET is set; `filesystem` when MEDIA_DIR is set or
   * on the embedded default (no DATABASE_URL); `postgres` otherwise. Files stored earlier stay readable
   * where they are (each file row names its store).
   */
  store: MediaStoreName;
  /** Largest audio or video upload in bytes (`MEDIA_MAX_AUDIO_MIB`, default 1024 MiB). */
  maxAudioBytes: number;
  /** Folder of the filesystem store (`MEDIA_DIR`, default `<WAVELINE_DATA_DIR>/media`). */
  dir: string;
  /** The S3 store: bucket (`MEDIA_S3_BUCKET`; empty: no S3 store), endpoint of an S3-compatible service (`MEDIA_S3_ENDPOINT`), region (`MEDIA_S3_REGION`), key prefix (`MEDIA_S3_PREFIX`). Credentials come from the AWS SDK's own variables. */
  s3: {
    bucket: string;
    endpoint: string;
    region: string;
    prefix: string;
    /** From AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY (/ AWS_SESSION_TOKEN); null: the SDK's own chain (profile, instance role). */
    credentials: { accessKeyId: string; secretAccessKey: string; sessionToken?: string } | null;
  };
  /** A CDN or public bucket serving the store's objects (`MEDIA_PUBLIC_BASE_URL`): published media answer 302 there. */
  publicBaseUrl: string;
}

export class ConfigError extends Error {}

type Env = Record<string, string | undefined>;

function str(env: Env, name: string, fallback: string): string {
  const value = env[name];
  return value === undefined || value === '' ? fallback : value;
}

function int(env: Env, name: string, fallback: number, min = 0, max = 2 ** 31): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (!/^\d+$/.test(raw)) throw new ConfigError(`${name} must be a whole number, got "${raw}"`);
  const value = Number(raw);
  if (value < min || value > max) throw new ConfigError(`${name} must be between ${min} and ${max}, got ${value}`);
  return value;
}

function bool(env: Env, name: string, fallback: boolean): boolean {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (raw === '1' || raw === 'true') return true;
  if (raw === '0' || raw === 'false') return false;
  throw new ConfigError(`${name} must be 0 or 1, got "${raw}"`);
}

function url(env: Env, name: string, fallback: string, protocols: string[]): string {
  const value = str(env, name, fallback);
  if (value === '') return ''; // unset with no default: the embedded adapter (DATABASE_URL, REDIS_URL)
  let parsed: URL;
  try {
    parsed = new URL(value);
  } catch {
    throw new ConfigError(`${name} must be a URL, got "${value}"`);
  }
  if (!protocols.includes(parsed.protocol)) {
    throw new ConfigError(`${name} must use ${protocols.join(' or ')}, got "${parsed.protocol}"`);
  }
  return value.replace(/\/+$/, '');
}

/** DATABASE_REPLICA_URLS: comma-separated Postgres URLs, only beside a DATABASE_URL (the embedded database has no replicas). */
function replicaUrls(env: Env, databaseUrl: string): string[] {
  const raw = str(env, 'DATABASE_REPLICA_URLS', '');
  if (raw.trim() === '') return [];
  if (!databaseUrl) throw new ConfigError('DATABASE_REPLICA_URLS needs DATABASE_URL (the embedded database has no replicas)');
  return raw
    .split(',')
    .map((each) => each.trim())
    .filter((each) => each !== '')
    .map((each, i) => {
      // Never echoed: a replica URL may hold a password.
      let parsed: URL | null = null;
      try {
        parsed = new URL(each);
      } catch {
        parsed = null;
      }
      if (parsed === null || (parsed.protocol !== 'postgres:' && parsed.protocol !== 'postgresql:'))
        throw new ConfigError(`DATABASE_REPLICA_URLS: entry ${i + 1} must be a postgres:// URL`);
      return each;
    });
}

/** A value that goes into an HTTP header: printable ASCII only. */
function userAgentSafe(env: Env, name: string, fallback: string): string {
  const value = str(env, name, fallback);
  if (!/^[\x20-\x7e]+$/.test(value)) throw new ConfigError(`${name} must be printable ASCII (a URL or an e-mail address), got "${value}"`);
  return value;
}

/** TRUSTED_PROXY_HOPS, or its older name GATEWAY_TRUSTED_PROXY_HOPS (both set: they must agree). */
function trustedProxyHops(env: Env): number {
  const hops = int(env, 'TRUSTED_PROXY_HOPS', -1, 0, 10);
  const legacy = int(env, 'GATEWAY_TRUSTED_PROXY_HOPS', -1, 0, 10);
  if (hops >= 0 && legacy >= 0 && hops !== legacy)
    throw new ConfigError(`TRUSTED_PROXY_HOPS (${hops}) and its older name GATEWAY_TRUSTED_PROXY_HOPS (${legacy}) disagree; set one`);
  return hops >= 0 ? hops : legacy >= 0 ? legacy : 1;
}

/** MEDIA_S3_PREFIX: empty, or path segments without leading slash, ending in `/`. */
function keyPrefix(env: Env): string {
  const raw = str(env, 'MEDIA_S3_PREFIX', '').replace(/^\/+|\/+$/g, '');
  return raw ? `${raw}/` : '';
}

function s3Credentials(env: Env): MediaConfig['s3']['credentials'] {
  const accessKeyId = str(env, 'AWS_ACCESS_KEY_ID', '');
  const secretAccessKey = str(env, 'AWS_SECRET_ACCESS_KEY', '');
  if (!accessKeyId || !secretAccessKey) return null;
  const sessionToken = str(env, 'AWS_SESSION_TOKEN', '');
  return { accessKeyId, secretAccessKey, ...(sessionToken ? { sessionToken } : {}) };
}

function mediaConfig(env: Env, databaseUrl: string, dataDir: string): MediaConfig {
  const bucket = str(env, 'MEDIA_S3_BUCKET', '');
  const mediaDir = str(env, 'MEDIA_DIR', '');
  return {
    store: bucket ? 's3' : mediaDir || !databaseUrl ? 'filesystem' : 'postgres',
    maxAudioBytes: int(env, 'MEDIA_MAX_AUDIO_MIB', 1024, 1, 1024 * 1024) * 1024 * 1024,
    dir: mediaDir || `${dataDir.replace(/\/+$/, '')}/media`,
    s3: {
      bucket,
      endpoint: url(env, 'MEDIA_S3_ENDPOINT', '', ['http:', 'https:']),
      region: str(env, 'MEDIA_S3_REGION', str(env, 'AWS_REGION', 'us-east-1')),
      prefix: keyPrefix(env),
      credentials: s3Credentials(env),
    },
    publicBaseUrl: url(env, 'MEDIA_PUBLIC_BASE_URL', '', ['http:', 'https:']),
  };
}

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

export function loadConfig(env: Env = process.env): Readonly<Config> {
  const logLevel = str(env, 'LOG_LEVEL', 'info');
  if (!LOG_LEVELS.includes(logLevel)) throw new ConfigError(`LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')}`);
  const nodeEnv = str(env, 'NODE_ENV', 'development');
  const secret = str(env, 'WAVELINE_SECRET', nodeEnv === 'production' ? '' : 'waveline-development-secret');
  if (secret.length < 16) throw new ConfigError('WAVELINE_SECRET must be set to at least 16 characters in production');
  const port = int(env, 'PORT', 3000, 0, 65535);
  const gatewayPort = int(env, 'GATEWAY_PORT', 3001, 0, 65535);
  // Unset: the embedded default (docs/embedded.md#when-the-embedded-default-applies); only `waveline dev` runs on it.
  const databaseUrl = url(env, 'DATABASE_URL', '', ['postgres:', 'postgresql:']);
  const dataDir = str(env, 'WAVELINE_DATA_DIR', '.waveline');
  const config: Config = {
    databaseUrl,
    databaseReplicaUrls: replicaUrls(env, databaseUrl),
    databaseReplicaMaxLagSeconds: int(env, 'DATABASE_REPLICA_MAX_LAG_SECONDS', 10, 1, 86_400),
    redisUrl: url(env, 'REDIS_URL', '', ['redis:', 'rediss:']),
    dataDir,
    port,
    gatewayPort,
    // The defaults follow the ports, so `PORT=8080 npm start` prints and links addresses that answer.
    publicBaseUrl: url(env, 'PUBLIC_BASE_URL', `http://localhost:${port}`, ['http:', 'https:']),
    realtimePublicUrl: url(env, 'REALTIME_PUBLIC_URL', `ws://localhost:${gatewayPort}`, ['ws:', 'wss:']),
    adminToken: str(env, 'WAVELINE_ADMIN_TOKEN', ''),
    secret,
    logLevel,
    nodeEnv,
    rateLimits: {
      listener: int(env, 'RATE_LIMIT_LISTENER_PER_MINUTE', 1200),
      graphql: int(env, 'RATE_LIMIT_GRAPHQL_PER_MINUTE', 600),
      push: int(env, 'RATE_LIMIT_PUSH_PER_MINUTE', 60),
      ingest: int(env, 'RATE_LIMIT_INGEST_PER_MINUTE', 600),
      anonymous: int(env, 'RATE_LIMIT_ANONYMOUS_PER_MINUTE', 600),
      adminFailures: int(env, 'RATE_LIMIT_ADMIN_FAILURES_PER_MINUTE', 10),
    },
    gateway: {
      maxConnectionsPerIp: int(env, 'GATEWAY_MAX_CONNECTIONS_PER_IP', 1000, 1),
      maxBackpressureBytes: int(env, 'GATEWAY_MAX_BACKPRESSURE_BYTES', 1024 * 1024, 1024),
      idleTimeoutSeconds: int(env, 'GATEWAY_IDLE_TIMEOUT_SECONDS', 120, 8, 960),
      maxMessageBytes: int(env, 'GATEWAY_MAX_MESSAGE_BYTES', 1024, 128, 1024 * 1024),
    },
    trustedProxyHops: trustedProxyHops(env),
    observability: {
      metrics: bool(env, 'METRICS', true),
      metricsToken: str(env, 'METRICS_TOKEN', ''),
      requestLog: bool(env, 'REQUEST_LOG', true),
      workerPort: int(env, 'WORKER_PORT', 3002, 0, 65535),
      workerLockSeconds: int(env, 'WORKER_LOCK_SECONDS', 30, 1, 3600),
      queueDashboardWrite: bool(env, 'QUEUE_DASHBOARD_WRITE', false),
    },
    demo: bool(env, 'WAVELINE_DEMO', true),
    graphql: {
      maxDepth: int(env, 'GRAPHQL_MAX_DEPTH', 10, 1, 100),
      maxAliases: int(env, 'GRAPHQL_MAX_ALIASES', 15, 0, 1000),
      maxCost: int(env, 'GRAPHQL_MAX_COST', 5000, 1, 1_000_000),
    },
    readCacheMaxBytes: int(env, 'READ_CACHE_MAX_BYTES', 64 * 1024 * 1024),
    artwork: {
      itunesBaseUrl: url(env, 'ARTWORK_ITUNES_BASE_URL', 'https://itunes.apple.com', ['http:', 'https:']),
      musicbrainzBaseUrl: url(env, 'ARTWORK_MUSICBRAINZ_BASE_URL', 'https://musicbrainz.org', ['http:', 'https:']),
      coverArtBaseUrl: url(env, 'ARTWORK_COVERART_BASE_URL', 'https://coverartarchive.org', ['http:', 'https:']),
      timeoutMs: int(env, 'ARTWORK_TIMEOUT_MS', 3000, 1),
      // Without one, the public address of this deployment says whose requests these are.
      contact: userAgentSafe(env, 'ARTWORK_CONTACT', str(env, 'PUBLIC_BASE_URL', `http://localhost:${port}`)),
    },
    audience: { pollSeconds: int(env, 'AUDIENCE_POLL_SECONDS', 30, 10, 300) },
    webhooks: { allowInsecure: bool(env, 'WEBHOOKS_ALLOW_INSECURE', false) },
    media: mediaConfig(env, databaseUrl, dataDir),
    push: {
      fcmUrl: url(env, 'PUSH_FCM_URL', 'https://fcm.googleapis.com', ['https:', 'http:']),
      apnsUrl: url(env, 'PUSH_APNS_URL', 'https://api.push.apple.com', ['https:']),
      apnsSandboxUrl: url(env, 'PUSH_APNS_SANDBOX_URL', 'https://api.sandbox.push.apple.com', ['https:']),
      expoUrl: url(env, 'PUSH_EXPO_URL', 'https://exp.host', ['https:', 'http:']),
      maxPerSecond: int(env, 'PUSH_MAX_PER_SECOND', 5000, 1, 1_000_000),
      expoMaxPerSecond: int(env, 'PUSH_EXPO_MAX_PER_SECOND', 600, 1, 1_000_000),
      expoReceiptDelaySeconds: int(env, 'PUSH_EXPO_RECEIPT_DELAY_SECONDS', 900, 0, 86_400),
      requestTimeoutSeconds: int(env, 'PUSH_REQUEST_TIMEOUT_SECONDS', 10, 1, 300),
      concurrency: int(env, 'PUSH_CONCURRENCY', 64, 1, 4096),
    },
  };
  return Object.freeze(config);
}
