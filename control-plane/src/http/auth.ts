import { DomainError } from '@onsale/contracts';
import type { Context, MiddlewareHandler } from 'hono';
import type { Principal } from '../identity/verifier';
import type { BuyerActor, OperatorActor, PromoterActor } from '../lib/actors';
import { enforceRateLimits } from '../waiting-room/rate-limit';
import { clientIp } from './client-ip';
import type { AppEnv } from './env';

async function principal(c: Context<AppEnv>): Promise<Principal> {
  const cached = c.get('principal');
  if (cached) return cached;
  const h = c.req.header('authorization') ?? '';
  const m = /^Bearer\s+(\S+)$/i.exec(h);
  if (!m?.[1]) throw new DomainError('unauthenticated', 'a bearer token is required');
  const p = await c.get('services').identity.verify(m[1]);
  c.set('principal', p);
  return p;
}

/** A promoter of some tenant (any role); routes check the role they need through the domain verb. */
async function promoter(c: Context<AppEnv>): Promise<PromoterActor> {
  const p = await principal(c);
  if (!p.tenantId || !p.role || p.role === 'operator')
    throw new DomainError('forbidden', 'a promoter token is required');
  return { kind: 'promoter', sub: p.sub, tenantId: p.tenantId, role: p.role };
}

async function operator(c: Context<AppEnv>): Promise<OperatorActor> {
  const p = await principal(c);
  if (p.role !== 'operator') throw new DomainError('forbidden', 'an operator token is required');
  return { kind: 'operator', sub: p.sub };
}

async function buyer(c: Context<AppEnv>): Promise<BuyerActor> {
  const p = await principal(c);
  return { kind: 'buyer', sub: p.sub };
}

/**
 * A buyer on a waiting-room path: the IP's bucket is charged before the token is even checked
 * (a flood of bad tokens costs us nothing more), then the buyer's own bucket.
 */
async function rateLimitedBuyer(c: Context<AppEnv>): Promise<BuyerActor> {
  const ctx = c.get('services');
  await enforceRateLimits(ctx, { ip: clientIp(c) });
  const actor = await buyer(c);
  await enforceRateLimits(ctx, { buyer: actor.sub });
  return actor;
}

/** The security requirement every token-checked route declares: the bearer scheme the app registers. */
export const bearerSecurity = [{ bearer: [] as string[] }];

/**
 * Route middleware: runs before the route's validators, so a request without the right token is
 * a 401 or 403 whatever its body; the handler finds the actor on the context.
 */
const requireActor =
  <A>(check: (c: Context<AppEnv>) => Promise<A>): MiddlewareHandler<AppEnv & { Variables: { actor: A } }> =>
  async (c, next) => {
    c.set('actor', await check(c as never));
    await next();
  };

export const asPromoter = requireActor(promoter);
export const asOperator = requireActor(operator);
/** A buyer on a waiting-room path (rate limited per IP, then per buyer). */
export const asQueuedBuyer = requireActor(rateLimitedBuyer);
