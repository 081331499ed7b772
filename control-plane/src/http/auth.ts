import type { Context } from 'hono';
import type { Principal } from '../identity/verifier';
import type { BuyerActor, OperatorActor, PromoterActor } from '../lib/actors';
import { ServiceError } from '../lib/errors';
import type { AppEnv } from './env';

async function principal(c: Context<AppEnv>): Promise<Principal> {
  const cached = c.get('principal');
  if (cached) return cached;
  const h = c.req.header('authorization') ?? '';
  const m = /^Bearer\s+(\S+)$/i.exec(h);
  if (!m?.[1]) throw new ServiceError('unauthenticated', 'a bearer token is required');
  const p = await c.get('services').identity.verify(m[1]);
  c.set('principal', p);
  return p;
}

/** A promoter of some tenant (any role); routes check the role they need through the domain verb. */
export async function promoter(c: Context<AppEnv>): Promise<PromoterActor> {
  const p = await principal(c);
  if (!p.tenantId || !p.role || p.role === 'operator')
    throw new ServiceError('forbidden', 'a promoter token is required');
  return { kind: 'promoter', sub: p.sub, tenantId: p.tenantId, role: p.role };
}

export async function operator(c: Context<AppEnv>): Promise<OperatorActor> {
  const p = await principal(c);
  if (p.role !== 'operator') throw new ServiceError('forbidden', 'an operator token is required');
  return { kind: 'operator', sub: p.sub };
}

export async function buyer(c: Context<AppEnv>): Promise<BuyerActor> {
  const p = await principal(c);
  return { kind: 'buyer', sub: p.sub };
}

export const bearerSecurity = [{ bearer: [] as string[] }];
