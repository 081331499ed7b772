import { createRoute, z } from '@hono/zod-openapi';
import { errorResponses } from '@onsale/contracts';
import { botReport } from '../../bot-report/report';
import { asPromoter, bearerSecurity } from '../auth';
import type { App } from '../env';
import { EventIdParam } from '../schemas';

const n = z.number().int();
const BotReportSchema = z
  .object({
    eventId: z.string(),
    challenges: z.object({ issued: n, solved: n, note: z.string() }),
    joinsRefused: z.object({ rateLimited: n, withoutPresaleCode: n }),
    tokensRevoked: n.openapi({ description: 'Admission revocations an operator made for this onsale' }),
    registrationsRefused: z.object({ duplicate: n, overIpLimit: n, overDeviceLimit: n }),
    fairness: z.object({ commitment: z.string(), revealed: z.boolean(), record: z.string() }).nullable(),
    lottery: z.object({ commitment: z.string(), drawn: z.boolean(), record: z.string() }).nullable(),
  })
  .openapi('BotReport');

const route = createRoute({
  method: 'get',
  path: '/events/{eventId}/bot-report',
  tags: ['onsale'],
  summary: 'Challenges, refused joins, revoked tokens, refused registrations and the fairness records of the onsale',
  security: bearerSecurity,
  middleware: [asPromoter] as const,
  request: { params: EventIdParam },
  responses: {
    200: { description: 'The bot report', content: { 'application/json': { schema: BotReportSchema } } },
    ...errorResponses('validation_failed', 'unauthenticated', 'forbidden', 'not_found'),
  },
});

export function registerBotReport(app: App) {
  app.openapi(route, async (c) => {
    c.header('cache-control', 'no-store');
    return c.json(
      await botReport({ ctx: c.get('services'), actor: c.get('actor'), eventId: c.req.valid('param').eventId }),
      200,
    );
  });
}
