import { z } from '@hono/zod-openapi';
import { errorResponses } from '@onsale/contracts';
import { BUCKETS } from '@onsale/reporting';

/** What the four sales routes share: the counted columns, the bucket names and the errors. */
export const SalesCounts = {
  holds: z.number().int(),
  paidOrders: z.number().int(),
  seatsSold: z.number().int(),
  gross: z.number().int().describe('minor units'),
  refunded: z.number().int().describe('minor units'),
  declines: z.number().int(),
  expiries: z.number().int(),
};
export const SalesBucket = z.enum(Object.keys(BUCKETS) as [keyof typeof BUCKETS]);
export const salesErrors = errorResponses('validation_failed', 'unauthenticated', 'forbidden', 'not_found');
