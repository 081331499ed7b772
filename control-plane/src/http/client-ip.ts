import { getConnInfo } from '@hono/node-server/conninfo';
import type { Context } from 'hono';
import type { AppEnv } from './env';

/**
 * The client's IP: the first X-Forwarded-For hop when behind the trusted edge (TRUST_PROXY), else the socket. The
 * router keeps of the chain only what the proxies in front of it appended (TRUSTED_PROXY_HOPS), so the first hop is
 * the address CloudFront saw, not one the client wrote.
 */
export function clientIp<E extends AppEnv>(c: Context<E>): string {
  if (c.get('services').config.TRUST_PROXY) {
    const xff = c.req.header('x-forwarded-for')?.split(',')[0]?.trim();
    if (xff) return xff;
  }
  try {
    return getConnInfo(c).remote.address ?? 'unknown';
  } catch {
    return 'unknown';
  }
}
