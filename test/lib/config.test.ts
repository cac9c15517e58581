import { expect } from 'chai';
import { existsSync } from 'node:fs';
import { ConfigError, loadConfig } from '../../src/config.ts';
import { createDb } from '../../src/lib/db.ts';

describe('configuration', () => {
  it('public addresses default to the ports the roles listen on', () => {
    const plain = loadConfig({});
    expect(plain.publicBaseUrl).to.equal('http://localhost:3000');
    expect(plain.realtimePublicUrl).to.equal('ws://localhost:3001');
    const moved = loadConfig({ PORT: '8080', GATEWAY_PORT: '8081' });
    expect(moved.publicBaseUrl).to.equal('http://localhost:8080');
    expect(moved.realtimePublicUrl).to.equal('ws://localhost:8081');
  });

  it('explicit public addresses win over the ports, without a trailing slash', () => {
    const config = loadConfig({ PORT: '8080', PUBLIC_BASE_URL: 'https://radio.example/', REALTIME_PUBLIC_URL: 'wss://live.radio.example' });
    expect(config.publicBaseUrl).to.equal('https://radio.example');
    expect(config.realtimePublicUrl).to.equal('wss://live.radio.example');
  });

  it('rejects a public address with the wrong scheme', () => {
    expect(() => loadConfig({ REALTIME_PUBLIC_URL: 'https://live.example' })).to.throw(ConfigError, /REALTIME_PUBLIC_URL/);
  });

  it('media store: s3 when MEDIA_S3_BUCKET is set; filesystem for the embedded default or MEDIA_DIR; postgres otherwise', () => {
    const pg = 'postgres://db.example/waveline';
    expect(loadConfig({}).media).to.include({ store: 'filesystem', dir: '.waveline/media', maxAudioBytes: 1024 * 1024 * 1024 });
    expect(loadConfig({ WAVELINE_DATA_DIR: '/srv/wl' }).media.dir).to.equal('/srv/wl/media');
    expect(loadConfig({ DATABASE_URL: pg }).media.store).to.equal('postgres');
    expect(loadConfig({ DATABASE_URL: pg, MEDIA_DIR: '/srv/media' }).media).to.include({ store: 'filesystem', dir: '/srv/media' });
    const s3 = loadConfig({
      DATABASE_URL: pg,
      MEDIA_DIR: '/srv/media',
      MEDIA_S3_BUCKET: 'b',
      MEDIA_S3_PREFIX: '/radio/',
      MEDIA_S3_ENDPOINT: 'http://s3.local:9000/',
    });
    expect(s3.media.store).to.equal('s3');
    expect(s3.media.s3).to.include({ bucket: 'b', prefix: 'radio/', endpoint: 'http://s3.local:9000', region: 'us-east-1' });
    expect(loadConfig({ MEDIA_MAX_AUDIO_MIB: '2048' }).media.maxAudioBytes).to.equal(2048 * 1024 * 1024);
    expect(() => loadConfig({ MEDIA_PUBLIC_BASE_URL: 'cdn.example' })).to.throw(ConfigError, /MEDIA_PUBLIC_BASE_URL/);
  });

  it('READ_CACHE_MAX_BYTES defaults to 64 MiB, takes 0 (keep nothing) and refuses anything but a whole number', () => {
    expect(loadConfig({}).readCacheMaxBytes).to.equal(64 * 1024 * 1024);
    expect(loadConfig({ READ_CACHE_MAX_BYTES: '0' }).readCacheMaxBytes).to.equal(0);
    expect(() => loadConfig({ READ_CACHE_MAX_BYTES: '64MB' })).to.throw(ConfigError, /READ_CACHE_MAX_BYTES/);
  });

  it('accepts a Postgres Unix-socket URL (README, co-located Postgres), and it connects', async function () {
    const url = 'postgres:///postgres?host=/var/run/postgresql&user=postgres';
    expect(loadConfig({ DATABASE_URL: url }).databaseUrl).to.equal(url);
    if (!existsSync('/var/run/postgresql/.s.PGSQL.5432')) this.skip();
    const db = createDb(url, { max: 1 });
    try {
      expect((await db.raw('SELECT 1 AS one')).rows[0].one).to.equal(1);
    } finally {
      await db.destroy();
    }
  });

  it('observability defaults: metrics and request logs on, /metrics open, worker port 3002, 30 s job locks, read-only queue dashboard', () => {
    expect(loadConfig({}).observability).to.deep.equal({
      metrics: true,
      metricsToken: '',
      requestLog: true,
      workerPort: 3002,
      workerLockSeconds: 30,
      queueDashboardWrite: false,
    });
    const set = loadConfig({
      METRICS: '0',
      METRICS_TOKEN: 'scrape-me',
      REQUEST_LOG: '0',
      WORKER_PORT: '9102',
      WORKER_LOCK_SECONDS: '5',
      QUEUE_DASHBOARD_WRITE: '1',
    }).observability;
    expect(set).to.deep.equal({
      metrics: false,
      metricsToken: 'scrape-me',
      requestLog: false,
      workerPort: 9102,
      workerLockSeconds: 5,
      queueDashboardWrite: true,
    });
    expect(() => loadConfig({ WORKER_PORT: '70000' })).to.throw(ConfigError, /WORKER_PORT/);
    expect(() => loadConfig({ WORKER_LOCK_SECONDS: '0' })).to.throw(ConfigError, /WORKER_LOCK_SECONDS/);
    expect(() => loadConfig({ METRICS: 'yes' })).to.throw(ConfigError, /METRICS/);
  });
});

describe('configuration: the embedded default', () => {
  it('DATABASE_URL and REDIS_URL unset (or empty) mean embedded: empty URLs, data in ./.waveline', () => {
    for (const env of [{}, { DATABASE_URL: '', REDIS_URL: '' }]) {
      const config = loadConfig(env);
      expect(config.databaseUrl).to.equal('');
      expect(config.redis).to.deep.equal({ kind: 'memory' });
      expect(config.dataDir).to.equal('.waveline');
    }
    expect(loadConfig({ WAVELINE_DATA_DIR: '/srv/waveline' }).dataDir).to.equal('/srv/waveline');
  });

  it('set URLs are used as given and still checked', () => {
    const config = loadConfig({ DATABASE_URL: 'postgres://u:p@db:5432/w', REDIS_URL: 'redis://cache:6379/2' });
    expect([config.databaseUrl, config.redis]).to.deep.equal(['postgres://u:p@db:5432/w', { kind: 'single', url: 'redis://cache:6379/2' }]);
    expect(() => loadConfig({ REDIS_URL: 'http://cache' })).to.throw(ConfigError, /REDIS_URL/);
    expect(() => loadConfig({ DATABASE_URL: 'mysql://db' })).to.throw(ConfigError, /DATABASE_URL/);
  });

  it('REDIS_CLUSTER_URLS: comma-separated redis:// or rediss:// seeds of a Redis Cluster; with REDIS_URL too, an error naming both', () => {
    expect(loadConfig({ REDIS_CLUSTER_URLS: 'redis://10.0.0.1:7000, rediss://:pw@10.0.0.2:7000/' }).redis).to.deep.equal({
      kind: 'cluster',
      seeds: ['redis://10.0.0.1:7000', 'rediss://:pw@10.0.0.2:7000'],
    });
    expect(() => loadConfig({ REDIS_CLUSTER_URLS: 'redis://a:7000', REDIS_URL: 'redis://b:6379' })).to.throw(
      ConfigError,
      /REDIS_URL and REDIS_CLUSTER_URLS are both set/,
    );
    expect(() => loadConfig({ REDIS_CLUSTER_URLS: 'http://a:7000' })).to.throw(ConfigError, /REDIS_CLUSTER_URLS/);
    expect(() => loadConfig({ REDIS_CLUSTER_URLS: ' , ' })).to.throw(ConfigError, /REDIS_CLUSTER_URLS/);
  });
});
