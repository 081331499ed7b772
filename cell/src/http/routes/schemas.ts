import { z } from '@hono/zod-openapi';
import { ErrorBody } from '@onsale/contracts';

export const EventParams = z.object({ eventId: z.string().uuid() });
export const OrderParams = EventParams.extend({ orderId: z.string().uuid() });

/** Security requirements, named after the schemes the app registers (a buyer JWT, an admission token, the internal secret). */
export const buyerSecurity = [{ buyer: [] as string[] }];
export const internalSecurity = [{ internal: [] as string[] }];

const error = (description: string) => ({ description, content: { 'application/json': { schema: ErrorBody } } });
export const errors = {
  400: error('Malformed request; details.issues names each field'),
  401: error('No valid buyer token'),
  403: error('Admission token refused'),
  404: error('Not found'),
  409: error('Conflict; details names the seats or the key'),
  503: error('Cell fenced or dependency unavailable'),
};
