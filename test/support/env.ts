// Test configuration: a database and Redis index of the test run's own (never the dev ones).
// Set before any config is loaded.
process.env.NODE_ENV = 'test';
process.env.DATABASE_URL = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/waveline_test';
// TEST_REDIS_CLUSTER_URLS runs the suite on a Redis Cluster instead (`scripts/redis-cluster.sh start`;
// docs/operations.md#tests-on-a-redis-cluster): every master is flushed at the start.
if (process.env.TEST_REDIS_CLUSTER_URLS) {
  process.env.REDIS_CLUSTER_URLS = process.env.TEST_REDIS_CLUSTER_URLS;
  process.env.REDIS_URL = '';
} else {
  process.env.REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379/9';
  delete process.env.REDIS_CLUSTER_URLS;
}
process.env.WAVELINE_ADMIN_TOKEN = 'test-admin-token-0123456789';
process.env.WAVELINE_SECRET = 'test-secret-0123456789abcdef';
// Webhook receivers in tests are local http:// servers (the SSRF rules are tested without this, at function level).
process.env.WEBHOOKS_ALLOW_INSECURE = '1';
process.env.LOG_LEVEL = process.env.TEST_LOG_LEVEL ?? 'silent';
process.env.WORKER_PORT ??= '0'; // an ephemeral port: test workers never collide on 3002
for (const name of ['LISTENER', 'GRAPHQL', 'PUSH', 'INGEST', 'ANONYMOUS', 'ADMIN_FAILURES'])
  process.env[`RATE_LIMIT_${name}_PER_MINUTE`] ??= '0';

export const ADMIN_TOKEN = process.env.WAVELINE_ADMIN_TOKEN;
