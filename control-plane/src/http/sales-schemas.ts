import { z } from '@hono/zod-openapi';
import { errorResponses } from '@onsale/contracts';
import { BUCKETS } from '@onsale/reporting';

/** What the four sales routes share: the counted columns, the bucket names and the errors. */
export const SalesCounts = {
  holds: z.number().int(),
  paidOrders: z.number().int(),
  seatsSold: z
    .number()
    .int()
    .describe(
      'places paid for less places refunded, general-admission places included (a bucket of the timeline can be negative)',
    ),
  gross: z.number().int().describe('minor units'),
  refunded: z.number().int().describe('minor units'),
  refunds: z.number().int().describe('orders refunded'),
  seatsRefunded: z.number().int().describe('places refunded, general-admission places included'),
  declines: z.number().int(),
  expiries: z.number().int(),
  cancels: z.number().int().describe('unpaid orders ended by the event’s cancellation'),
};
export const SalesBucket = z.enum(Object.keys(BUCKETS) as [keyof typeof BUCKETS]);
export const salesErrors = errorResponses('validation_failed', 'unauthenticated', 'forbidden', 'not_found');
