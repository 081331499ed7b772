import { createRoute } from '@hono/zod-openapi';
import { errorResponses } from '@onsale/contracts';
import { doorOf, setDoor } from '../../waiting-room/door';
import { asOperator, bearerSecurity } from '../auth';
import type { App } from '../env';
import { DoorSchema, EventIdParam } from '../schemas';

const put = createRoute({
  method: 'put',
  path: '/operator/events/{eventId}/door',
  tags: ['operator'],
  summary:
    "Set what an onsale's waiting room asks of a join: proof-of-work difficulty (fixed or adaptive), device binding",
  description:
    'Applies to joins within 2 s. requireDeviceBinding refuses joins without a device key (jkt), so every admission ' +
    'token minted from then on is bound to a key; tokens minted before stay as they were until they expire.',
  security: bearerSecurity,
  middleware: [asOperator] as const,
  request: {
    params: EventIdParam,
    body: { required: true, content: { 'application/json': { schema: DoorSchema } } },
  },
  responses: {
    200: { description: 'The door as set', content: { 'application/json': { schema: DoorSchema } } },
    ...errorResponses('validation_failed', 'unauthenticated', 'forbidden', 'not_found'),
  },
});

const get = createRoute({
  method: 'get',
  path: '/operator/events/{eventId}/door',
  tags: ['operator'],
  summary: "What an onsale's waiting room asks of a join (an onsale never set asks for nothing)",
  security: bearerSecurity,
  middleware: [asOperator] as const,
  request: { params: EventIdParam },
  responses: {
    200: { description: 'The door', content: { 'application/json': { schema: DoorSchema } } },
    ...errorResponses('validation_failed', 'unauthenticated', 'forbidden'),
  },
});

export function registerOperatorDoor(app: App) {
  app.openapi(put, async (c) =>
    c.json(await setDoor(c.get('services'), c.req.valid('param').eventId, c.req.valid('json')), 200),
  );
  app.openapi(get, async (c) => c.json(await doorOf(c.get('services'), c.req.valid('param').eventId), 200));
}
