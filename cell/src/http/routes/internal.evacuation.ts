import { createRoute, z } from '@hono/zod-openapi';
import {
  BlockedSeatsAnswer,
  BlockedSeatsList,
  BlockedSeatsRequest,
  EvacuationFreeze,
  LedgerView,
} from '@onsale/contracts';
import type { Context } from 'hono';
import type { CellContext } from '../../context';
import { blockedSeats, blockSeats, freezeSales, ledgerView, unblockSeats, unfreezeSales } from '../../inventory/freeze';
import type { CellApp } from '../app';
import type { CellEnv } from '../env';
import { internalAuth, limitBody } from '../middleware';
import { EventParams, errors, internalSecurity } from './schemas';

/**
 * The cell's side of evacuating an event (control plane only): freeze, ledger view, blocked seats.
 * One table: each row is a route's method, path, input (query for reads and deletes, body for
 * writes), answer and the domain verb it calls; the shared parts (internal auth, body limit, the
 * event id, error answers) are added once below.
 */

interface Spec<I extends z.ZodObject | undefined, A extends z.ZodTypeAny> {
  method: 'get' | 'put' | 'post' | 'delete';
  path: string;
  summary: string;
  input?: I;
  answer: A;
  errors: (keyof typeof errors)[];
  run: (
    ctx: CellContext,
    eventId: string,
    input: I extends z.ZodObject ? z.infer<I> : undefined,
  ) => Promise<z.infer<A>>;
}

function evacuationRoute<I extends z.ZodObject | undefined, A extends z.ZodTypeAny>(spec: Spec<I, A>) {
  const inBody = spec.method === 'post' || spec.method === 'put';
  const route = createRoute({
    method: spec.method,
    path: `/internal/events/{eventId}${spec.path}`,
    summary: spec.summary,
    security: internalSecurity,
    middleware: [limitBody(16 * 1024 * 1024), internalAuth] as const,
    request: {
      params: EventParams,
      ...(spec.input && !inBody ? { query: spec.input } : {}),
      ...(spec.input && inBody
        ? { body: { required: true, content: { 'application/json': { schema: spec.input } } } }
        : {}),
    },
    responses: {
      200: { description: spec.summary, content: { 'application/json': { schema: spec.answer } } },
      ...Object.fromEntries(spec.errors.map((s) => [s, errors[s]])),
    },
  });
  // The route's schemas validate params, query and body before the handler runs (the app's defaultHook),
  // so the handler reads them back as the spec's types.
  const handler = async (c: Context<CellEnv>) => {
    const valid = c.req.valid.bind(c.req) as (target: 'param' | 'query' | 'json') => unknown;
    const { eventId } = valid('param') as { eventId: string };
    const input = spec.input ? valid(inBody ? 'json' : 'query') : undefined;
    return c.json(await spec.run(c.get('services').ctx, eventId, input as never), 200);
  };
  return { route, register: (app: CellApp) => app.openapi(route, handler as never) };
}

export const evacuationRoutes = [
  evacuationRoute({
    method: 'put',
    path: '/sales-freeze',
    summary: 'Freeze the event: new holds are refused (event_moving); holds already committed carry on. Idempotent',
    answer: EvacuationFreeze,
    errors: [401, 404, 409, 503],
    run: (ctx, eventId) => freezeSales(ctx, eventId),
  }),
  evacuationRoute({
    method: 'delete',
    path: '/sales-freeze',
    summary: "Lift the freeze to the sale's state in the control plane (on_sale or paused). Idempotent",
    input: z.object({ status: z.enum(['on_sale', 'paused']) }),
    answer: EvacuationFreeze,
    errors: [400, 401, 404, 503],
    run: (ctx, eventId, q) => unfreezeSales(ctx, eventId, q.status),
  }),
  evacuationRoute({
    method: 'get',
    path: '/ledger',
    summary: "The event's seats sold or held here, and what is still in flight",
    answer: LedgerView,
    errors: [401, 404],
    run: (ctx, eventId) => ledgerView(ctx, eventId),
  }),
  evacuationRoute({
    method: 'post',
    path: '/blocked-seats',
    summary: 'Block seats the source cell sold or holds. Idempotent',
    input: BlockedSeatsRequest,
    answer: BlockedSeatsAnswer,
    errors: [400, 401, 404, 503],
    run: async (ctx, eventId, b) => ({
      eventId,
      blocked: (await blockSeats(ctx, eventId, b.sourceCell, b.seatIds)).blocked,
    }),
  }),
  evacuationRoute({
    method: 'post',
    path: '/blocked-seats/release',
    summary: 'Release blocked seats the source reports free. Idempotent',
    input: BlockedSeatsRequest,
    answer: BlockedSeatsAnswer,
    errors: [400, 401, 503],
    run: async (ctx, eventId, b) => ({
      eventId,
      blocked: (await unblockSeats(ctx, eventId, b.sourceCell, b.seatIds)).blocked,
    }),
  }),
  evacuationRoute({
    method: 'get',
    path: '/blocked-seats',
    summary: 'Seats blocked here for a source cell',
    input: z.object({ sourceCell: z.string().min(1) }),
    answer: BlockedSeatsList,
    errors: [400, 401],
    run: async (ctx, eventId, q) => ({ eventId, seatIds: await blockedSeats(ctx, eventId, q.sourceCell) }),
  }),
];

export function registerEvacuation(app: CellApp) {
  for (const r of evacuationRoutes) r.register(app);
}
