import { connectRedis } from '@onsale/aws-auth';
import { Redis } from 'ioredis';
import { afterEach, describe, expect, it } from 'vitest';
import { serviceEnv } from '../../test/support/services';

// The cell API's client refuses commands while it has no connection (no offline queue): a hold then fails closed.
const clients: Redis[] = [];
const client = (url: string) => {
  const redis = new Redis(url, { enableOfflineQueue: false, maxRetriesPerRequest: 1 });
  redis.on('error', () => {});
  clients.push(redis);
  return redis;
};
afterEach(() => {
  for (const redis of clients.splice(0)) redis.disconnect();
});

describe("the cell API's Redis connection at start", () => {
  it('a client just created refuses a command; once connectRedis returns, the first command is served', async () => {
    const url = serviceEnv().REDIS_URL!;
    await expect(client(url).mget('revoked:a', 'revoked:b')).rejects.toThrow("Stream isn't writeable");
    const connected = client(url);
    await connectRedis(connected, url, { REDIS_AUTH: 'password' });
    expect(connected.status).toBe('ready');
    expect(await connected.mget('revoked:a', 'revoked:b')).toEqual([null, null]);
  });

  it('a Redis that does not answer at the start does not stop the process: connectRedis returns, the client retries', async () => {
    // A port nothing listens on (below the range tests and servers take).
    const url = 'redis://127.0.0.1:1';
    const unreachable = client(url);
    await connectRedis(unreachable, url, { REDIS_AUTH: 'password' });
    expect(unreachable.status).not.toBe('ready');
    expect(unreachable.status).not.toBe('end');
  });
});
