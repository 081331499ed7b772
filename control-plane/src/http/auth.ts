import { DomainError, isStaffAccount, STAFF_NOT_BUYER } from '@onsale/contracts';
import type { Context, MiddlewareHandler } from 'hono';
import type { Principal } from '../identity/verifier';
import type { BuyerActor, OperatorActor, PromoterActor } from '../lib/actors';
import { enforceRateLimits } from '../waiting-room/rate-limit';
import { clientIp } from './client-ip';
import type { AppEnv } from './env';

function bearerToken(c: Context<AppEnv>): string {
  const m = /^Bearer\s+(\S+)$/i.exec(c.req.header('authorization') ?? '');
  if (!m?.[1]) throw new DomainError('unauthenticated', 'a bearer token is required');
  return m[1];
}

async function principal(c: Context<AppEnv>): Promise<Principal> {
  const cached = c.get('principal');
  if (cached) return cached;
  const p = await c.get('services').identity.verify(bearerToken(c));
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
  if (isStaffAccount(p)) throw new DomainError('forbidden', STAFF_NOT_BUYER);
  return { kind: 'buyer', sub: p.sub };
}

/**
 * A buyer on a waiting-room path, charged to the IP's bucket, then the buyer's. A token not seen
 * before costs a signature check, so its IP's bucket is charged first, in a call of its own (a
 * flood of bad tokens is refused before it costs one). A known token costs a lookup: both buckets
 * are then charged by the room's own script, in the one Redis call of the join or poll (`charges`).
 */
async function rateLimitedBuyer(c: Context<AppEnv>): Promise<BuyerActor> {
  const ctx = c.get('services');
  const ip = clientIp(c);
  const known = ctx.identity.isKnown(bearerToken(c));
  if (!known) await enforceRateLimits(ctx, { ip });
  const actor = await buyer(c);
  c.set('charges', known ? { ip, buyer: actor.sub } : { buyer: actor.sub });
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
/** What asQueuedBuyer refuses, for a route's documented responses: no token, a staff account's, too many calls. */
export const QUEUED_BUYER_REFUSALS = ['unauthenticated', 'forbidden', 'rate_limited'] as const;
