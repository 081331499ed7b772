import { createRoute, z } from '@hono/zod-openapi';
import { errorResponses } from '@onsale/contracts';
import { createTenant, listTenants } from '../../tenants/tenants';
import { asOperator, bearerSecurity } from '../auth';
import type { App } from '../env';

const Tenant = z.object({ id: z.string().uuid(), name: z.string(), createdAt: z.string() }).openapi('Tenant');
const dto = (t: { id: string; name: string; createdAt: Date }) => ({
  id: t.id,
  name: t.name,
  createdAt: t.createdAt.toISOString(),
});

const create = createRoute({
  method: 'post',
  path: '/operator/tenants',
  tags: ['operator'],
  summary: 'Onboard a promoter organisation',
  security: bearerSecurity,
  middleware: [asOperator] as const,
  request: {
    body: {
      required: true,
      content: { 'application/json': { schema: z.object({ name: z.string().min(1).max(200) }) } },
    },
  },
  responses: {
    201: { description: 'Created', content: { 'application/json': { schema: Tenant } } },
    ...errorResponses('validation_failed', 'unauthenticated', 'forbidden'),
  },
});

const list = createRoute({
  method: 'get',
  path: '/operator/tenants',
  tags: ['operator'],
  security: bearerSecurity,
  middleware: [asOperator] as const,
  responses: {
    200: {
      description: 'Tenants',
      content: { 'application/json': { schema: z.object({ tenants: z.array(Tenant) }) } },
    },
    ...errorResponses('unauthenticated', 'forbidden'),
  },
});

/** Operators onboard tenants (two small routes on one resource). */
export function registerOperatorTenants(app: App) {
  app.openapi(create, async (c) => {
    return c.json(dto(await createTenant({ ctx: c.get('services'), input: c.req.valid('json') })), 201);
  });
  app.openapi(list, async (c) => {
    return c.json({ tenants: (await listTenants({ ctx: c.get('services') })).map(dto) }, 200);
  });
}
