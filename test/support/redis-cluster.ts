import { execFileSync } from 'node:child_process';
import { resolve } from 'node:path';
import { clusterReady, createClusterRedis } from '@onsale/control-plane/waiting-room/cluster-client';
import type { Cluster, Redis } from 'ioredis';
import { repoRoot } from './services';

/**
 * A real Redis Cluster of three primaries on 127.0.0.1 (scripts/lib/redis-cluster.sh: started if it is not
 * running, left running after), and an ioredis Cluster client for it, typed as the Redis the services take.
 */
export function redisClusterNodes(): { host: string; port: number }[] {
  const out = execFileSync('bash', [resolve(repoRoot, 'scripts/lib/redis-cluster.sh'), 'start'], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const line = /REDIS_CLUSTER_NODES=(\S+)/.exec(out)?.[1];
  if (!line) throw new Error(`redis-cluster.sh start printed no nodes: ${out}`);
  return line.split(',').map((hp) => {
    const [host, port] = hp.split(':');
    return { host: host!, port: Number(port) };
  });
}

/** The control plane's own cluster client (waiting-room/cluster-client.ts), connected before it is handed out. */
export async function redisClusterClient(nodes = redisClusterNodes()): Promise<Redis> {
  const cluster = createClusterRedis(nodes.map((n) => `${n.host}:${n.port}`).join(','));
  await clusterReady(cluster);
  return cluster;
}

/** Deletes keys under a prefix on every primary (a SCAN through the cluster client reaches one node only). */
export async function deleteClusterKeys(client: Redis, prefix: string) {
  for (const node of (client as unknown as Cluster).nodes('master')) {
    let cursor = '0';
    do {
      const [next, keys] = await node.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000);
      cursor = next;
      // One key per DEL: the keys of one node still spread over its many slots.
      await Promise.all(keys.map((k) => node.del(k)));
    } while (cursor !== '0');
  }
}
