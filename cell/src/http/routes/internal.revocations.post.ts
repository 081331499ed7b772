import { createRoute } from '@hono/zod-openapi';
import { RevocationNotice, RevocationNoticeAnswer } from '@onsale/contracts';
import type { CellApp } from '../app';
import { internalAuth, limitBody } from '../middleware';
import { errors, internalSecurity } from './schemas';

export const revocationRoute = createRoute({
  method: 'post',
  path: '/internal/revocations',
  summary:
    'Enforce an admission revocation in this cell until the tokens it covers expire (control plane only; idempotent)',
  security: internalSecurity,
  middleware: [limitBody(4 * 1024), internalAuth] as const,
  request: { body: { required: true, content: { 'application/json': { schema: RevocationNotice } } } },
  responses: {
    200: {
      description: 'Recorded in the cell’s Redis: holds with a covered token are refused from now on',
      content: { 'application/json': { schema: RevocationNoticeAnswer } },
    },
    400: errors[400],
    401: errors[401],
    503: errors[503],
  },
});

export function registerRevocations(app: CellApp) {
  app.openapi(revocationRoute, async (c) => {
    const answer = await c
      .get('services')
      .verifiers.recordRevocation(c.req.valid('json'), Math.floor(Date.now() / 1000));
    return c.json(answer, 200);
  });
}
