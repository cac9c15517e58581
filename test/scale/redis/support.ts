import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { Redis } from 'ioredis';
import { eventually } from '../../support/factories.ts';
import { repoRoot, startProcess, type RoleProcess } from '../../support/processes.ts';
import { keySlot } from '../../../src/lib/slot.ts';

// The scale suite's Redis Cluster (scripts/redis-cluster.sh: 127.0.0.1:7101–7106, three masters with a
// replica each) and the operations the tests do on it with the cluster's own commands: who owns a slot,
// a live slot move (CLUSTER SETSLOT IMPORTING/MIGRATING, MIGRATE, SETSLOT NODE — what `redis-cli --cluster
// reshard` does), a CLUSTER FAILOVER, a killed master and its return as a replica.

export const CLUSTER_PORTS = [7101, 7102, 7103, 7104, 7105, 7106];
export const SEEDS = CLUSTER_PORTS.slice(0, 3)
  .map((port) => `redis://127.0.0.1:${port}`)
  .join(',');
const CLUSTER_DIR = process.env.REDIS_CLUSTER_DIR ?? '/tmp/waveline-redis-cluster';

/** Starts the cluster when it is not running (idempotent), and waits for cluster_state:ok on every node. */
export function ensureCluster(): void {
  execFileSync('bash', ['scripts/redis-cluster.sh', 'start'], { cwd: repoRoot, stdio: 'pipe', timeout: 120_000 });
}

const conns = new Map<number, Redis>();
/** A plain connection to one node (no cluster routing), kept for the run. */
export function node(port: number): Redis {
  let conn = conns.get(port);
  if (!conn || conn.status === 'end') {
    conn = new Redis({ host: '127.0.0.1', port, maxRetriesPerRequest: 1, lazyConnect: false, retryStrategy: () => 200 });
    conn.on('error', () => undefined);
    conns.set(port, conn);
  }
  return conn;
}

export function closeNodes(): void {
  for (const conn of conns.values()) conn.disconnect();
  conns.clear();
}

export interface ClusterNode {
  id: string;
  port: number;
  master: boolean;
  masterId: string | null;
  failed: boolean;
  slots: Array<[number, number]>;
}

/** CLUSTER NODES as one node sees it. */
export async function clusterNodes(from?: number): Promise<ClusterNode[]> {
  const port = from ?? (await anyLivePort());
  const text = (await node(port).call('CLUSTER', 'NODES')) as string;
  return text
    .trim()
    .split('\n')
    .map((line) => {
      const [id, address, flags, masterId, , , , , ...slots] = line.split(' ');
      return {
        id,
        port: Number(address.split('@')[0].split(':')[1]),
        master: flags.includes('master'),
        masterId: masterId === '-' ? null : masterId,
        failed: flags.split(',').some((flag) => flag === 'fail' || flag === 'fail?'),
        slots: slots
          .filter((s) => !s.startsWith('['))
          .map((s) => {
            const [a, b] = s.split('-').map(Number);
            return [a, b ?? a] as [number, number];
          }),
      };
    });
}

async function anyLivePort(): Promise<number> {
  for (const port of CLUSTER_PORTS) {
    try {
      if ((await node(port).ping()) === 'PONG') return port;
    } catch {
      // next
    }
  }
  throw new Error('no cluster node answers');
}

/** The port of the master owning `slot`, as `from` (or any node) sees it. */
export async function ownerOf(slot: number, from?: number): Promise<number> {
  const owner = (await clusterNodes(from)).find((n) => n.master && !n.failed && n.slots.some(([a, b]) => slot >= a && slot <= b));
  if (!owner) throw new Error(`no master owns slot ${slot}`);
  return owner.port;
}

/** The live masters' ports, in port order. */
export async function masters(): Promise<number[]> {
  return (await clusterNodes())
    .filter((n) => n.master && !n.failed && n.slots.length > 0)
    .map((n) => n.port)
    .sort();
}

export const feedSlot = (stationId: string): number => keySlot(`waveline:feed:{${stationId}}`);

/** Station ids of this run, one whose feed channel lands on each master (in `masters()` order). */
export async function stationIdsOnEveryMaster(prefix: string): Promise<Array<{ id: string; master: number; slot: number }>> {
  const wanted = await masters();
  const found = new Map<number, { id: string; master: number; slot: number }>();
  const nodes = await clusterNodes();
  for (let i = 0; found.size < wanted.length && i < 1000; i++) {
    const id = `${prefix}-${Date.now().toString(36)}-${i}`;
    const slot = feedSlot(id);
    const owner = nodes.find((n) => n.master && n.slots.some(([a, b]) => slot >= a && slot <= b))!.port;
    if (!found.has(owner)) found.set(owner, { id, master: owner, slot });
  }
  return wanted.map((port) => found.get(port)!);
}

/** Every node answers cluster_state:ok and agrees on the owner of `slot` (when given). */
export async function clusterSettled(slot?: number, owner?: number): Promise<boolean> {
  for (const port of CLUSTER_PORTS) {
    try {
      const info = (await node(port).call('CLUSTER', 'INFO')) as string;
      if (!info.includes('cluster_state:ok')) return false;
      if (slot !== undefined && owner !== undefined && (await ownerOf(slot, port)) !== owner) return false;
    } catch {
      return false;
    }
  }
  return true;
}

/**
 * Moves one slot, with its keys, from its master to `to` while clients use it — what `redis-cli
 * --cluster reshard` does for each slot: IMPORTING on the target, MIGRATING on the source, MIGRATE the
 * keys, then SETSLOT NODE on the target, the source and every other master.
 */
export async function moveSlot(slot: number, to: number): Promise<void> {
  const nodes = await clusterNodes(to);
  const from = await ownerOf(slot, to);
  if (from === to) return;
  const target = nodes.find((n) => n.port === to)!;
  const source = nodes.find((n) => n.port === from)!;
  await node(to).call('CLUSTER', 'SETSLOT', String(slot), 'IMPORTING', source.id);
  await node(from).call('CLUSTER', 'SETSLOT', String(slot), 'MIGRATING', target.id);
  for (;;) {
    const batch = (await node(from).call('CLUSTER', 'GETKEYSINSLOT', String(slot), '100')) as string[];
    if (batch.length === 0) break;
    await node(from).call('MIGRATE', '127.0.0.1', String(to), '', '0', '5000', 'REPLACE', 'KEYS', ...batch);
  }
  await node(to).call('CLUSTER', 'SETSLOT', String(slot), 'NODE', target.id);
  await node(from).call('CLUSTER', 'SETSLOT', String(slot), 'NODE', target.id);
  for (const other of nodes.filter((n) => n.master && !n.failed && n.port !== to && n.port !== from))
    await node(other.port).call('CLUSTER', 'SETSLOT', String(slot), 'NODE', target.id);
  await eventually(() => clusterSettled(slot, to), { timeoutMs: 20_000, intervalMs: 100 });
}

/** The replica of the master on `port`. */
export async function replicaOf(port: number): Promise<number> {
  const find = async (): Promise<number | null> => {
    const nodes = await clusterNodes(port);
    const master = nodes.find((n) => n.port === port)!;
    return nodes.find((n) => n.masterId === master.id && !n.failed)?.port ?? null;
  };
  // A master promoted a moment ago is told of its new replica (the demoted one) by gossip.
  return (await eventually(find, { timeoutMs: 20_000, intervalMs: 100 }).catch(() => {
    throw new Error(`master ${port} has no live replica`);
  })) as number;
}

/** CLUSTER FAILOVER on the replica of the master on `port`; resolves once every node sees the replica own `slot`. */
export async function failover(port: number, slot: number): Promise<number> {
  const replica = await replicaOf(port);
  await eventually(() => replicaInSync(replica), { timeoutMs: 30_000, intervalMs: 100 });
  await node(replica).call('CLUSTER', 'FAILOVER');
  await eventually(() => clusterSettled(slot, replica), { timeoutMs: 30_000, intervalMs: 100 });
  return replica;
}

/**
 * The replica on `port` has its copy of its master's data: the replication link is up and no sync is under
 * way. A node that rejoined a moment ago as a replica first loads a full copy; until then Redis refuses to
 * promote it (its data is older than cluster-replica-validity-factor allows), so a test that kills its
 * master must wait for this first.
 */
export async function replicaInSync(port: number): Promise<boolean> {
  try {
    const info = String(await node(port).info('replication'));
    return info.includes('role:slave') && info.includes('master_link_status:up') && info.includes('master_sync_in_progress:0');
  } catch {
    return false;
  }
}

/** What a node says of itself when the cluster did not do what a test waited for: its view and its log's end. */
async function diagnose(port: number): Promise<string> {
  const parts = [`node ${port}:`];
  for (const [name, read] of [
    ['CLUSTER INFO', () => node(port).call('CLUSTER', 'INFO')],
    ['INFO replication', () => node(port).info('replication')],
    ['CLUSTER NODES', () => node(port).call('CLUSTER', 'NODES')],
  ] as const)
    parts.push(`${name}:\n${String(await read().catch((err: Error) => err.message)).trim()}`);
  try {
    parts.push(`redis.log (end):\n${readFileSync(`${CLUSTER_DIR}/${port}/redis.log`, 'utf8').trim().split('\n').slice(-25).join('\n')}`);
  } catch {
    // no log
  }
  return parts.join('\n');
}

/** Kills the master on `port` (SIGKILL); resolves once its replica took over `slot` and the cluster is ok. */
export async function killMaster(port: number, slot: number): Promise<number> {
  const replica = await replicaOf(port);
  await eventually(() => replicaInSync(replica), { timeoutMs: 30_000, intervalMs: 100 }).catch(async () => {
    throw new Error(`the replica of ${port} never had its copy of the data\n${await diagnose(replica)}`);
  });
  const pid = Number(readFileSync(`${CLUSTER_DIR}/${port}/redis.pid`, 'utf8').trim());
  process.kill(pid, 'SIGKILL');
  conns.get(port)?.disconnect();
  conns.delete(port);
  await eventually(
    async () => {
      try {
        const info = (await node(replica).call('CLUSTER', 'INFO')) as string;
        return info.includes('cluster_state:ok') && (await ownerOf(slot, replica)) === replica;
      } catch {
        return false;
      }
    },
    { timeoutMs: 30_000, intervalMs: 100 },
  ).catch(async () => {
    throw new Error(`master ${port} was killed and its replica ${replica} did not take over slot ${slot}\n${await diagnose(replica)}`);
  });
  return replica;
}

/**
 * Restarts every stopped node (it rejoins from its nodes.conf as a replica) and waits for the cluster:
 * every node ok, none flagged failing in any node's view, and every master with a replica.
 */
export async function restoreCluster(): Promise<void> {
  ensureCluster();
  const whole = async (): Promise<boolean> => {
    if (!(await clusterSettled())) return false;
    for (const port of CLUSTER_PORTS) {
      const nodes = await clusterNodes(port);
      if (nodes.some((n) => n.failed)) return false;
      const masters = nodes.filter((n) => n.master && n.slots.length > 0);
      if (masters.length !== 3 || masters.some((m) => !nodes.some((n) => n.masterId === m.id))) return false;
      // A node back from a kill first loads a full copy from its master (see replicaInSync).
      if (nodes.find((n) => n.port === port)?.master === false && !(await replicaInSync(port))) return false;
    }
    return true;
  };
  await eventually(() => whole().catch(() => false), { timeoutMs: 60_000, intervalMs: 200 }).catch(async () => {
    const views = await Promise.all(CLUSTER_PORTS.map((port) => diagnose(port)));
    throw new Error(`the cluster did not come back whole\n${views.join('\n\n')}`);
  });
}

export function freePort(): Promise<number> {
  return new Promise((ok) => {
    const srv = createServer().listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as { port: number };
      srv.close(() => ok(port));
    });
  });
}

export interface ClusterRole extends RoleProcess {
  url: string;
  port: number;
  stop(): Promise<void>;
}

/** A role (`waveline web|worker|gateway`) as a process of its own on the cluster (REDIS_CLUSTER_URLS). */
export async function startClusterRole(role: 'web' | 'worker' | 'gateway', env: Record<string, string> = {}): Promise<ClusterRole> {
  const port = await freePort();
  const proc = startProcess([role], {
    NODE_ENV: 'production',
    LOG_LEVEL: 'warn',
    REDIS_URL: '',
    REDIS_CLUSTER_URLS: SEEDS,
    PORT: String(port),
    WORKER_PORT: String(port),
    ...env,
  });
  const url = `http://127.0.0.1:${port}`;
  await eventually(
    async () => {
      try {
        return (await fetch(`${url}/${role === 'gateway' ? 'healthz' : 'readyz'}`)).ok;
      } catch {
        return false;
      }
    },
    { timeoutMs: 30_000, intervalMs: 100 },
  ).catch((err: unknown) => {
    throw new Error(`${role} did not become ready: ${String(err)}\n${proc.output()}`);
  });
  return {
    ...proc,
    url,
    port,
    async stop() {
      if (proc.child.exitCode !== null || proc.child.signalCode !== null) return;
      proc.child.kill('SIGTERM');
      await proc.exited;
    },
  };
}

/** PUBSUB SHARDNUMSUB of a station's feed channel on each master: port → subscribers. */
export async function shardSubscribers(stationId: string): Promise<Map<number, number>> {
  const counts = new Map<number, number>();
  for (const port of await masters()) {
    const reply = (await node(port).call('PUBSUB', 'SHARDNUMSUB', `waveline:feed:{${stationId}}`)) as [string, number];
    counts.set(port, Number(reply[1]));
  }
  return counts;
}
