import { createRoute, z } from '@hono/zod-openapi';
import { errorResponses } from '@onsale/contracts';
import { listCells, registerCell, updateCell } from '../../cells/cells';
import { CELL_KAFKA_AUTH_MODES } from '../../db/schema';
import { asOperator, bearerSecurity } from '../auth';
import type { App } from '../env';
import { CellIdParam, CellSchema, toCellDto } from '../schemas';

const Status = z.enum(['active', 'draining', 'down', 'evacuated']);
const isBroker = (b: string) => {
  const port = Number(/^[A-Za-z0-9.-]+:(\d{1,5})$/.exec(b)?.[1]);
  return port > 0 && port < 65_536;
};
/** The cell's own bootstrap brokers as kafkajs takes them and MSK lists them: host:port, comma-separated. */
const KafkaBrokers = z
  .string()
  .max(2_048)
  .refine((v) => v.split(',').every(isBroker), 'expected comma-separated host:port brokers')
  .openapi({ example: 'b-1.onsale-c1.abc123.c2.kafka.eu-west-1.amazonaws.com:9098' });
const KafkaAuth = z.enum(CELL_KAFKA_AUTH_MODES).openapi({
  description: "How a client signs in to the cell's brokers; aws-msk-iam signs for the cell's region",
});
const CreateBody = z
  .object({
    id: z.string().regex(/^[a-z0-9][a-z0-9-]{0,62}$/),
    baseUrl: z.string().url(),
    region: z.string().min(1).max(64),
    status: Status.optional(),
    capacity: z.number().int().min(1).max(10_000).optional(),
    kafkaBrokers: KafkaBrokers.optional(),
    kafkaAuth: KafkaAuth.optional(),
  })
  .openapi('RegisterCell');
const UpdateBody = z
  .object({
    baseUrl: z.string().url().optional(),
    region: z.string().min(1).max(64).optional(),
    status: Status.optional(),
    capacity: z.number().int().min(1).max(10_000).optional(),
    kafkaBrokers: KafkaBrokers.optional(),
    kafkaAuth: KafkaAuth.optional(),
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
  summary: 'Change a cell (status: active, draining, down, evacuated; capacity; base URL; brokers)',
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
