import { createRoute, z } from '@hono/zod-openapi';
import { errorResponses } from '@onsale/contracts';
import { listCells, registerCell, updateCell } from '../../cells/cells';
import { asOperator, bearerSecurity } from '../auth';
import type { App } from '../env';
import { CellIdParam, CellSchema, toCellDto } from '../schemas';

const Status = z.enum(['active', 'draining', 'down', 'evacuated']);
const CreateBody = z
  .object({
    id: z.string().regex(/^[a-z0-9][a-z0-9-]{0,62}$/),
    baseUrl: z.string().url(),
    region: z.string().min(1).max(64),
    status: Status.optional(),
    capacity: z.number().int().min(1).max(10_000).optional(),
  })
  .openapi('RegisterCell');
const UpdateBody = z
  .object({
    baseUrl: z.string().url().optional(),
    region: z.string().min(1).max(64).optional(),
    status: Status.optional(),
    capacity: z.number().int().min(1).max(10_000).optional(),
  })
  .strict()
  .openapi('UpdateCell');

const create = createRoute({
  method: 'post',
  path: '/operator/cells',
  tags: ['operator'],
  summary: 'Register a purchase cell',
  security: bearerSecurity,
  middleware: [asOperator] as const,
  request: { body: { required: true, content: { 'application/json': { schema: CreateBody } } } },
  responses: {
    201: { description: 'Registered', content: { 'application/json': { schema: CellSchema } } },
    ...errorResponses('validation_failed', 'unauthenticated', 'forbidden', 'conflict'),
  },
});
const list = createRoute({
  method: 'get',
  path: '/operator/cells',
  tags: ['operator'],
  summary: 'Cells with their load (events not ended ÷ capacity)',
  security: bearerSecurity,
  middleware: [asOperator] as const,
  responses: {
    200: {
      description: 'Cells',
      content: { 'application/json': { schema: z.object({ cells: z.array(CellSchema) }) } },
    },
    ...errorResponses('unauthenticated', 'forbidden'),
  },
});
const update = createRoute({
  method: 'patch',
  path: '/operator/cells/{cellId}',
  tags: ['operator'],
  summary: 'Change a cell (status: active, draining, down, evacuated; capacity; base URL)',
  security: bearerSecurity,
  middleware: [asOperator] as const,
  request: { params: CellIdParam, body: { required: true, content: { 'application/json': { schema: UpdateBody } } } },
  responses: {
    200: { description: 'Updated', content: { 'application/json': { schema: CellSchema } } },
    ...errorResponses('validation_failed', 'unauthenticated', 'forbidden', 'not_found'),
  },
});

/** The cell registry (operator only). */
export function registerOperatorCells(app: App) {
  app.openapi(create, async (c) => {
    return c.json(toCellDto(await registerCell({ ctx: c.get('services'), input: c.req.valid('json') })), 201);
  });
  app.openapi(list, async (c) => {
    return c.json({ cells: (await listCells({ ctx: c.get('services') })).map(toCellDto) }, 200);
  });
  app.openapi(update, async (c) => {
    return c.json(
      toCellDto(
        await updateCell({ ctx: c.get('services'), cellId: c.req.valid('param').cellId, input: c.req.valid('json') }),
      ),
      200,
    );
  });
}
