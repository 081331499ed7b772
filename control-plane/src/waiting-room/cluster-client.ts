import { Cluster, type Redis } from 'ioredis';

/** `host:port,host:port`: a Redis Cluster's seed nodes, as REDIS_CLUSTER_NODES gives them. */
export function parseClusterNodes(nodes: string): { host: string; port: number }[] {
  return nodes.split(',').map((hp) => {
    const [host, port] = hp.trim().split(':');
    return { host: host!, port: Number(port) };
  });
}

/**
 * The waiting room's Redis when its queues are spread over a cluster's primaries (WAITING_ROOM_SHARDS > 1), typed
 * as the Redis every caller takes: the room's keys of one shard share a hash tag, so each command and script lands
 * on one primary.
 */
export function createClusterRedis(nodes: string, password?: string, commandTimeout?: number): Redis {
  const cluster = new Cluster(parseClusterNodes(nodes), {
    enableAutoPipelining: true,
    // The room's scripts whose number of keys comes first: auto-pipelining groups a command by its first argument's
    // slot (here the number), so joins and polls of different shards would share a pipeline, which a cluster refuses.
    autoPipeliningIgnoredCommands: ['wrJoin', 'wrStatus', 'wrLimits'],
    redisOptions: { maxRetriesPerRequest: 2, commandTimeout, ...(password ? { password } : {}) },
  });
  return cluster as unknown as Redis;
}

/**
 * Resolves once the client has read the cluster's slot map: a burst of auto-pipelined commands sent before that
 * fails ("All keys in the pipeline should belong to the same slots allocation group").
 */
export async function clusterReady(redis: Redis): Promise<void> {
  const client: unknown = redis;
  if (!(client instanceof Cluster) || client.status === 'ready') return;
  await new Promise<void>((resolve, reject) => {
    client.once('ready', () => resolve());
    client.once('error', reject);
  });
}
