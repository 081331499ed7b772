import { execFileSync } from 'node:child_process';
import { resolve } from 'node:path';
import { Cluster, type Redis } from 'ioredis';
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

/**
 * Connected before it is handed out: ioredis's auto-pipelining groups commands by the cluster's slot map, and a
 * burst of commands sent before the client has read that map fails ("All keys in the pipeline should belong to
 * the same slots allocation group").
 */
export async function redisClusterClient(nodes = redisClusterNodes()): Promise<Redis> {
  const cluster = new Cluster(nodes, {
    enableAutoPipelining: true,
    // The room's scripts whose number of keys comes first: auto-pipelining groups a command by its first argument's
    // slot (here the number), so joins and polls of different shards would share a pipeline, which a cluster refuses.
    autoPipeliningIgnoredCommands: ['wrJoin', 'wrStatus', 'wrLimits'],
    redisOptions: { maxRetriesPerRequest: 2 },
  });
  if (cluster.status !== 'ready') await new Promise((resolve) => cluster.once('ready', resolve));
  return cluster as unknown as Redis;
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
