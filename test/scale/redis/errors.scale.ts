import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { admin } from '../../support/http.ts';
import { eventually } from '../../support/factories.ts';
import { ingest, ingestFixture } from '../../support/ingest.ts';
import { keySlot } from '../../../src/lib/slot.ts';
import { CLUSTER_PORTS, closeNodes, node, ownerOf, replicaOf, restoreCluster, startClusterRole, type ClusterRole } from './support.ts';

// While a slot has no master (its master killed and its replica not allowed to take over: the cluster
// answers CLUSTERDOWN), the ingest and admin writes answer 503 PROVIDER_UNAVAILABLE with Retry-After —
// never 500 — and work again once a master is back (docs/errors.md, docs/operations.md#redis-cluster).

const CLUSTER_DIR = process.env.REDIS_CLUSTER_DIR ?? '/tmp/waveline-redis-cluster';

describe('Redis Cluster: writes while a slot has no master', function () {
  this.timeout(180_000);
  let web: ClusterRole;
  let worker: ClusterRole;

  before(async () => {
    await restoreCluster();
    [web, worker] = await Promise.all([startClusterRole('web'), startClusterRole('worker')]);
  });

  after(async () => {
    await Promise.all([web?.stop(), worker?.stop()]);
    await restoreCluster().catch(() => undefined);
    closeNodes();
  });

  afterEach(function () {
    if (this.currentTest?.state === 'failed') process.stderr.write(`web output:\n${web.output().slice(-6000)}\n`);
  });

  it('answers 503 PROVIDER_UNAVAILABLE with Retry-After (never 500), and 200 again once the replica took over', async () => {
    const { station, ingestToken } = await ingestFixture(web.url);
    expect((await ingest(web.url, station, ingestToken, { artist: 'Before', title: 'The Outage' })).status).to.equal(200);

    // The master of the station's slot (its feed channel, which the ingest publishes to) goes away, and
    // its replica may not take over yet: every node answers CLUSTERDOWN.
    const slot = keySlot(`waveline:feed:{${station.id}}`);
    const owner = await ownerOf(slot);
    const replica = await replicaOf(owner);
    await node(replica).config('SET', 'cluster-replica-no-failover', 'yes');
    process.kill(Number(readFileSync(`${CLUSTER_DIR}/${owner}/redis.pid`, 'utf8').trim()), 'SIGKILL');
    const others = CLUSTER_PORTS.filter((port) => port !== owner);
    await eventually(
      async () => {
        for (const port of others) if (!String(await node(port).call('CLUSTER', 'INFO')).includes('cluster_state:fail')) return false;
        return true;
      },
      { timeoutMs: 20_000, intervalMs: 100 },
    );

    const refused = await ingest(web.url, station, ingestToken, { artist: 'During', title: 'The Outage' });
    expect(refused.status, JSON.stringify(refused.body)).to.equal(503);
    expect(refused.headers.get('retry-after')).to.match(/^\d+$/);
    // The ingest answers in its own error shape ({error: message}; docs/now-playing.md).
    expect(JSON.stringify(refused.body)).to.match(/Redis is temporarily unavailable/);
    const adminWrite = await admin(web.url, 'POST', '/stations', { slug: `outage-${Date.now()}`, name: 'Outage FM', timezone: 'UTC' });
    expect(adminWrite.status, JSON.stringify(adminWrite.body)).to.be.oneOf([201, 503]);
    if (adminWrite.status === 503) expect(adminWrite.headers.get('retry-after')).to.match(/^\d+$/);
    expect(web.output()).not.to.include('CROSSSLOT');

    // The replica may take over now: writes answer again, by themselves.
    await node(replica).config('SET', 'cluster-replica-no-failover', 'no');
    const promoted = async () => {
      try {
        return (
          String(await node(replica).call('CLUSTER', 'INFO')).includes('cluster_state:ok') && (await ownerOf(slot, replica)) === replica
        );
      } catch {
        return false;
      }
    };
    await eventually(promoted, { timeoutMs: 15_000, intervalMs: 200 }).catch(async () => {
      // A replica may not start an election for a master that failed while it was not allowed to: ask it.
      await node(replica)
        .call('CLUSTER', 'FAILOVER', 'TAKEOVER')
        .catch(() => undefined);
      await eventually(promoted, { timeoutMs: 30_000, intervalMs: 200 });
    });
    await eventually(async () => (await ingest(web.url, station, ingestToken, { artist: 'After', title: 'The Outage' })).status === 200, {
      timeoutMs: 10_000,
      intervalMs: 200,
    });
    await restoreCluster();
  });
});
