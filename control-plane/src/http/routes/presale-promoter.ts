import { createRoute, z } from '@hono/zod-openapi';
import { errorResponses, Instant } from '@onsale/contracts';
import { drawPresale } from '../../presale/lottery';
import { getPresale, openPresale } from '../../presale/presale';
import { asPromoter, bearerSecurity } from '../auth';
import type { App } from '../env';
import { PresaleSchema } from '../presale-schemas';
import { EventIdParam } from '../schemas';

export const OpenPresaleBody = z
  .object({
    registrationOpensAt: Instant,
    registrationClosesAt: Instant,
    presaleStartsAt: Instant,
    presaleEndsAt: Instant,
    invitations: z.number().int().min(1).max(1_000_000),
    waitlistSize: z.number().int().min(0).max(1_000_000).optional(),
    invitationTtlSeconds: z
      .number()
      .int()
      .min(60)
      .max(7 * 86_400)
      .optional(),
  })
  .strict()
  .openapi('OpenPresale');

const put = createRoute({
  method: 'put',
  path: '/events/{eventId}/presale',
  tags: ['presale'],
  summary: "Open (or, until registration closes, change) the onsale's presale registration and lottery",
  security: bearerSecurity,
  middleware: [asPromoter] as const,
  request: {
    params: EventIdParam,
    body: { required: true, content: { 'application/json': { schema: OpenPresaleBody } } },
  },
  responses: {
    200: { description: 'The presale', content: { 'application/json': { schema: PresaleSchema } } },
    ...errorResponses('validation_failed', 'unauthenticated', 'forbidden', 'not_found', 'conflict'),
  },
});

const get = createRoute({
  method: 'get',
  path: '/events/{eventId}/presale',
  tags: ['presale'],
  summary: 'The presale: registrations with the accounts per IP and device, the draw, invitations, conversion',
  security: bearerSecurity,
  middleware: [asPromoter] as const,
  request: { params: EventIdParam },
  responses: {
    200: { description: 'The presale', content: { 'application/json': { schema: PresaleSchema } } },
    ...errorResponses('validation_failed', 'unauthenticated', 'forbidden', 'not_found', 'conflict'),
  },
});

const draw = createRoute({
  method: 'post',
  path: '/events/{eventId}/presale/draw',
  tags: ['presale'],
  summary: 'Draw the lottery now (registration must have closed; the worker draws at the close anyway)',
  security: bearerSecurity,
  middleware: [asPromoter] as const,
  request: { params: EventIdParam },
  responses: {
    200: { description: 'Drawn', content: { 'application/json': { schema: PresaleSchema } } },
    ...errorResponses('validation_failed', 'unauthenticated', 'forbidden', 'not_found', 'conflict'),
  },
});

export function registerPresalePromoter(app: App) {
  app.openapi(put, async (c) => {
    const ctx = c.get('services');
    const actor = c.get('actor');
    const { eventId } = c.req.valid('param');
    const b = c.req.valid('json');
    await openPresale({
      ctx,
      actor,
      eventId,
      input: {
        ...b,
        registrationOpensAt: new Date(b.registrationOpensAt),
        registrationClosesAt: new Date(b.registrationClosesAt),
        presaleStartsAt: new Date(b.presaleStartsAt),
        presaleEndsAt: new Date(b.presaleEndsAt),
      },
    });
    return c.json(await getPresale({ ctx, actor, eventId }), 200);
  });
  app.openapi(get, async (c) => {
    c.header('cache-control', 'no-store');
    return c.json(
      await getPresale({ ctx: c.get('services'), actor: c.get('actor'), eventId: c.req.valid('param').eventId }),
      200,
    );
  });
  app.openapi(draw, async (c) => {
    const ctx = c.get('services');
    const actor = c.get('actor');
    const { eventId } = c.req.valid('param');
    await drawPresale({ ctx, actor, eventId });
    return c.json(await getPresale({ ctx, actor, eventId }), 200);
  });
}
