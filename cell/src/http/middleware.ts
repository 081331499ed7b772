import { errorResponse, limitBody as limitDeclaredBody, validationIssues } from '@onsale/contracts';
import type { MiddlewareHandler } from 'hono';
import type { z } from 'zod';
import { DomainError } from '../errors';
import type { CellEnv } from './env';

/** 401 unless the request carries a valid buyer JWT; the buyer's id is then on the context. */
export const buyerAuth: MiddlewareHandler<CellEnv> = async (c, next) => {
  const buyer = await c.get('services').verifiers.buyer(c.req.header('authorization'));
  c.set('userId', buyer.userId);
  if (buyer.email) c.set('buyerEmail', buyer.email);
  c.set('log', c.get('log').child({ userId: buyer.userId }));
  await next();
};

/** 403 unless the admission token binds this buyer, this event and this cell (and, bound to a key, the request proves it holds it). */
export const admissionCheck: MiddlewareHandler<CellEnv> = async (c, next) => {
  await c
    .get('services')
    .verifiers.admission(
      c.req.header('x-admission-token'),
      { userId: c.get('userId'), eventId: c.req.param('eventId') ?? '' },
      { dpop: c.req.header('dpop'), method: c.req.method, path: c.req.path },
    );
  await next();
};

/** Calls from the control plane carry the cell's internal bearer secret. */
export const internalAuth: MiddlewareHandler<CellEnv> = async (c, next) => {
  const expected = `Bearer ${c.get('services').internalToken}`;
  if (c.req.header('authorization') !== expected) throw new DomainError('unauthenticated', 'internal token required');
  await next();
};

export const limitBody = (maxSize: number): MiddlewareHandler =>
  limitDeclaredBody(maxSize, () => {
    throw new DomainError('payload_too_large', `request body exceeds ${maxSize} bytes`);
  });

/**
 * The path's ids checked before the body limit: a malformed id is the 400 naming it that the route's own
 * validator gives (and it checks them again), not a 413 for a body that was never going to be used.
 */
export const validParams =
  (schema: z.ZodType): MiddlewareHandler<CellEnv> =>
  async (c, next) => {
    const parsed = schema.safeParse(c.req.param());
    if (!parsed.success)
      return errorResponse(c, 'validation_failed', 'invalid param', {
        details: { issues: validationIssues(parsed.error, 'param') },
      });
    await next();
  };
