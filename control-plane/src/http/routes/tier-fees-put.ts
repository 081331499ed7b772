import { createRoute, z } from '@hono/zod-openapi';
import { errorResponses, MAX_SEAT_PRICE } from '@onsale/contracts';
import { setTierFees } from '../../events/fees';
import { asPromoter, bearerSecurity } from '../auth';
import type { App } from '../env';
import { EventIdParam } from '../schemas';

const Params = EventIdParam.extend({
  code: z
    .string()
    .min(1)
    .max(32)
    .openapi({ param: { name: 'code', in: 'path' }, description: "The price tier's code", example: 'floor' }),
});

const Body = z
  .object({
    fee: z
      .number()
      .int()
      .min(0)
      .max(MAX_SEAT_PRICE)
      .openapi({
        description: `Service fee per ticket, minor units; price plus an added fee at most ${MAX_SEAT_PRICE}`,
      }),
    fees: z
      .enum(['included', 'added'])
      .openapi({ description: "'included': the buyer pays the price (fee inside it); 'added': price + fee" }),
  })
  .strict()
  .openapi('TierFees');

const Result = z
  .object({
    code: z.string(),
    name: z.string(),
    price: z.number().int(),
    currency: z.string(),
    fee: z.number().int(),
    fees: z.enum(['included', 'added']),
    buyerPays: z.number().int().openapi({ description: 'What a buyer pays per ticket of this tier, minor units' }),
  })
  .openapi('TierFeesSet');

const route = createRoute({
  method: 'put',
  path: '/events/{eventId}/tiers/{code}/fees',
  tags: ['events'],
  summary: "Set a price tier's fee (included or added) before the onsale starts (manager or owner)",
  description: 'After the onsale started (or once the sale is live) fees are final: 409 conflict.',
  security: bearerSecurity,
  middleware: [asPromoter] as const,
  request: { params: Params, body: { required: true, content: { 'application/json': { schema: Body } } } },
  responses: {
    200: {
      description: 'Fees set; a loaded event is loaded into its cell again',
      content: { 'application/json': { schema: Result } },
    },
    ...errorResponses('validation_failed', 'unauthenticated', 'forbidden', 'not_found', 'conflict'),
  },
});

export function registerPutTierFees(app: App) {
  app.openapi(route, async (c) => {
    const { eventId, code } = c.req.valid('param');
    const r = await setTierFees({
      ctx: c.get('services'),
      actor: c.get('actor'),
      eventId,
      code,
      input: c.req.valid('json'),
    });
    return c.json(r, 200);
  });
}
