import { createRoute, z } from '@hono/zod-openapi';
import { errorResponses } from '@onsale/contracts';
import { declineInvitation, presaleOutcome, registerForPresale } from '../../presale/buyer';
import { enforceRateLimits } from '../../waiting-room/rate-limit';
import { asQueuedBuyer, bearerSecurity, QUEUED_BUYER_REFUSALS } from '../auth';
import { clientIp } from '../client-ip';
import type { App } from '../env';
import { PresaleOutcomeSchema } from '../presale-schemas';
import { EventIdParam } from '../schemas';

export const RegisterBody = z
  .object({
    deviceId: z
      .string()
      .regex(/^[A-Za-z0-9._:-]{8,128}$/)
      .openapi({
        description: "The client's own stable id (kept by the buyer's browser or app), for the limit per device",
      }),
  })
  .strict()
  .openapi('PresaleRegistration');

const register = createRoute({
  method: 'post',
  path: '/events/{eventId}/presale/registrations',
  tags: ['presale'],
  summary: 'Register this account for the presale (one per account; limited per IP and per device)',
  description:
    'A second registration of the account, or one over the limit of accounts per IP or per device, is a 409 whose ' +
    'details.reason says which (already_registered, accounts_per_ip_exceeded, accounts_per_device_exceeded).',
  security: bearerSecurity,
  middleware: [asQueuedBuyer] as const,
  request: {
    params: EventIdParam,
    body: { required: true, content: { 'application/json': { schema: RegisterBody } } },
  },
  responses: {
    201: { description: 'Registered', content: { 'application/json': { schema: PresaleOutcomeSchema } } },
    ...errorResponses('validation_failed', ...QUEUED_BUYER_REFUSALS, 'not_found', 'conflict'),
  },
});

const me = createRoute({
  method: 'get',
  path: '/events/{eventId}/presale/me',
  tags: ['presale'],
  summary: 'Your registration and, after the draw, your outcome: an access code, a waitlist place, or not selected',
  security: bearerSecurity,
  middleware: [asQueuedBuyer] as const,
  request: { params: EventIdParam },
  responses: {
    200: { description: 'Your presale', content: { 'application/json': { schema: PresaleOutcomeSchema } } },
    ...errorResponses('validation_failed', ...QUEUED_BUYER_REFUSALS, 'not_found', 'conflict'),
  },
});

const decline = createRoute({
  method: 'post',
  path: '/events/{eventId}/presale/me/decline',
  tags: ['presale'],
  summary: 'Give up your open invitation: its place goes to the next buyer on the waitlist',
  security: bearerSecurity,
  middleware: [asQueuedBuyer] as const,
  request: { params: EventIdParam },
  responses: {
    200: { description: 'Declined', content: { 'application/json': { schema: PresaleOutcomeSchema } } },
    ...errorResponses('validation_failed', ...QUEUED_BUYER_REFUSALS, 'not_found', 'conflict'),
  },
});

export function registerPresaleBuyer(app: App) {
  app.openapi(register, async (c) => {
    const ctx = c.get('services');
    const charges = c.get('charges');
    if (charges) await enforceRateLimits(ctx, charges);
    c.header('cache-control', 'no-store');
    const outcome = await registerForPresale({
      ctx,
      actor: c.get('actor'),
      eventId: c.req.valid('param').eventId,
      ip: clientIp(c),
      deviceId: c.req.valid('json').deviceId,
    });
    return c.json(outcome, 201);
  });
  for (const [route, verb] of [
    [me, presaleOutcome],
    [decline, declineInvitation],
  ] as const) {
    app.openapi(route, async (c) => {
      const ctx = c.get('services');
      const charges = c.get('charges');
      if (charges) await enforceRateLimits(ctx, charges);
      c.header('cache-control', 'no-store');
      return c.json(await verb({ ctx, actor: c.get('actor'), eventId: c.req.valid('param').eventId }), 200);
    });
  }
}
