import { createRoute, z } from '@hono/zod-openapi';
import { errorResponses } from '@onsale/contracts';
import type { EventMove } from '../../db/schema';
import {
  abortOperatorMove,
  operatorMove,
  operatorMoves,
  planOperatorEvacuation,
  resumeOperatorMove,
  runOperatorEvacuation,
} from '../../evacuation/operator';
import { asOperator, bearerSecurity } from '../auth';
import type { App } from '../env';

/** Evacuation on the operator API: the same plan, run, status, resume and abort as the CLI (control-plane/src/evacuation). */

const CellId = z.string().min(1).max(64);
const Input = z
  .object({
    eventId: z.string().uuid().optional(),
    cellId: CellId.optional(),
    to: z.array(CellId).min(1).max(50).optional(),
    drainSeconds: z.number().int().min(0).max(3600).optional(),
    /** The source is dead: its cell id, typed again (runbooks/cell-dead-source.md). */
    confirmSourceDead: CellId.optional(),
  })
  .strict()
  .refine((b) => !!b.eventId !== !!b.cellId, { message: 'name exactly one of eventId or cellId', path: ['eventId'] })
  .openapi('EvacuationRequest', { description: 'One event (eventId) or every event of a cell (cellId)' });

const Plan = z
  .object({
    source: z.string(),
    moves: z.array(
      z.object({
        eventId: z.string(),
        name: z.string(),
        fromCell: z.string(),
        toCell: z.string(),
        openMoveId: z.string().nullable(),
      }),
    ),
    targets: z.array(
      z.object({ cellId: z.string(), capacity: z.number(), eventsBefore: z.number(), eventsAfter: z.number() }),
    ),
    notMoved: z.array(z.object({ eventId: z.string(), status: z.string(), why: z.string() })),
    drainSeconds: z.number(),
    sourceDead: z.boolean(),
    steps: z.array(z.string()),
  })
  .openapi('EvacuationPlan');

const Move = z
  .object({
    id: z.string(),
    eventId: z.string(),
    fromCell: z.string(),
    toCell: z.string(),
    step: z.string(),
    drainSeconds: z.number(),
    fenceEpoch: z.number().nullable(),
    flipEpoch: z.number().nullable(),
    report: z.record(z.string(), z.unknown()),
    lastError: z.string().nullable(),
    createdAt: z.string(),
    updatedAt: z.string(),
  })
  .openapi('EventMove');

const toMove = (m: EventMove): z.infer<typeof Move> => ({
  id: m.id,
  eventId: m.eventId,
  fromCell: m.fromCell,
  toCell: m.toCell,
  step: m.step,
  drainSeconds: m.drainSeconds,
  fenceEpoch: m.fenceEpoch,
  flipEpoch: m.flipEpoch,
  report: m.report as Record<string, unknown>,
  lastError: m.lastError,
  createdAt: m.createdAt.toISOString(),
  updatedAt: m.updatedAt.toISOString(),
});

const MoveParam = z.object({
  moveId: z
    .string()
    .uuid()
    .openapi({ param: { name: 'moveId', in: 'path' } }),
});
const json = <T extends z.ZodTypeAny>(schema: T, description: string) => ({
  description,
  content: { 'application/json': { schema } },
});
const body = { required: true, content: { 'application/json': { schema: Input } } };
const refusals = errorResponses(
  'validation_failed',
  'unauthenticated',
  'forbidden',
  'not_found',
  'conflict',
  'cell_unavailable',
);

const plan = createRoute({
  tags: ['operator'],
  security: bearerSecurity,
  middleware: [asOperator] as const,
  method: 'post',
  path: '/operator/evacuation-plans',
  summary: 'Dry run: which events would move where, with each target’s load before and after; nothing changes',
  request: { body },
  responses: { 200: json(Plan, 'The plan'), ...refusals },
});
const run = createRoute({
  tags: ['operator'],
  security: bearerSecurity,
  middleware: [asOperator] as const,
  method: 'post',
  path: '/operator/evacuations',
  summary: 'Record the moves of the plan and carry them forward in the background (follow them with GET)',
  request: { body },
  responses: { 202: json(z.object({ plan: Plan, moves: z.array(Move) }), 'Started'), ...refusals },
});
const list = createRoute({
  tags: ['operator'],
  security: bearerSecurity,
  middleware: [asOperator] as const,
  method: 'get',
  path: '/operator/evacuations',
  summary: 'Moves of an event or of a cell (as source or target), oldest first',
  request: {
    query: z.object({ eventId: z.string().uuid().optional(), cellId: CellId.optional() }),
  },
  responses: {
    200: json(z.object({ moves: z.array(Move) }), 'Moves'),
    ...errorResponses('validation_failed', 'unauthenticated', 'forbidden'),
  },
});
const get = createRoute({
  tags: ['operator'],
  security: bearerSecurity,
  middleware: [asOperator] as const,
  method: 'get',
  path: '/operator/evacuations/{moveId}',
  summary: 'One move: its step, what each step saw (report) and the last error',
  request: { params: MoveParam },
  responses: {
    200: json(Move, 'The move'),
    ...errorResponses('validation_failed', 'unauthenticated', 'forbidden', 'not_found'),
  },
});
const resume = createRoute({
  tags: ['operator'],
  security: bearerSecurity,
  middleware: [asOperator] as const,
  method: 'post',
  path: '/operator/evacuations/{moveId}/resume',
  summary: 'Carry a stopped move forward from its recorded step (after a crash, or to finish settling)',
  request: { params: MoveParam },
  responses: { 202: json(Move, 'Resuming'), ...refusals },
});
const abort = createRoute({
  tags: ['operator'],
  security: bearerSecurity,
  middleware: [asOperator] as const,
  method: 'post',
  path: '/operator/evacuations/{moveId}/abort',
  summary: 'Abort before the flip: the event sells on its source cell as before',
  request: { params: MoveParam },
  responses: { 200: json(Move, 'Aborted'), ...refusals },
});

export function registerOperatorEvacuations(app: App) {
  app.openapi(plan, async (c) =>
    c.json(await planOperatorEvacuation({ ctx: c.get('services'), input: c.req.valid('json') }), 200),
  );
  app.openapi(run, async (c) => {
    const r = await runOperatorEvacuation({ ctx: c.get('services'), input: c.req.valid('json') });
    return c.json({ plan: r.plan, moves: r.moves.map(toMove) }, 202);
  });
  app.openapi(list, async (c) => {
    const by = c.req.valid('query');
    return c.json({ moves: (await operatorMoves({ ctx: c.get('services'), by })).map(toMove) }, 200);
  });
  app.openapi(get, async (c) =>
    c.json(toMove(await operatorMove({ ctx: c.get('services'), moveId: c.req.valid('param').moveId })), 200),
  );
  app.openapi(resume, async (c) =>
    c.json(toMove(await resumeOperatorMove({ ctx: c.get('services'), moveId: c.req.valid('param').moveId })), 202),
  );
  app.openapi(abort, async (c) =>
    c.json(toMove(await abortOperatorMove({ ctx: c.get('services'), moveId: c.req.valid('param').moveId })), 200),
  );
}
