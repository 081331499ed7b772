import type { RefundOrderAnswer } from '@onsale/contracts';
import { desc, eq, inArray } from 'drizzle-orm';
import { CellCallError } from '../cells/client';
import type { Services } from '../context';
import { cells, eventMoves } from '../db/schema';
import { dbOf } from '../db/tx';
import { eventForTenant } from '../events/events';
import { actorName, assertRole, type PromoterActor } from '../lib/actors';
import { conflict, notFound } from '../lib/errors';

/**
 * A promoter cancels one paid order (a buyer who cannot come, a fraud case): the cell that holds
 * the order refunds it through the saga and voids its tickets at once; when Stripe confirms the
 * refund its seats go back on sale, once, and the release controller, seeing places again, lets
 * the waiting room admit buyers for them. Repeating the call answers the order's state and refunds
 * nothing twice.
 */
export async function refundOrder({
  ctx,
  actor,
  eventId,
  orderId,
  reason,
}: {
  ctx: Services;
  actor: PromoterActor;
  eventId: string;
  orderId: string;
  reason: string;
}): Promise<RefundOrderAnswer> {
  assertRole(actor, 'manager');
  const ev = await eventForTenant(dbOf(ctx), actor.tenantId, eventId);
  for (const cell of await cellsThatSold(ctx, ev.id, ev.cellId)) {
    try {
      const answer = await ctx.cells.refundOrder(cell, ev.id, orderId, { reason });
      ctx.log.info('order refund requested', {
        eventId,
        orderId,
        cellId: cell.id,
        status: answer.status,
        actor: actorName(actor),
      });
      return answer;
    } catch (err) {
      if (!(err instanceof CellCallError)) throw err;
      if (err.status === 404) continue;
      // The cell's reason (an order not paid, say) is the promoter's answer too.
      const refusal = (err.body as { error?: { message?: string; details?: unknown } } | undefined)?.error;
      if (err.status === 409) throw conflict(refusal?.message ?? 'the order cannot be refunded', refusal?.details);
      throw err;
    }
  }
  throw notFound('order');
}

/**
 * Where the event's orders can be: its cell now, then the cells it was evacuated from, latest
 * first (an order stays in the cell that took it; a move does not copy orders).
 */
async function cellsThatSold(ctx: Services, eventId: string, current: string | null) {
  const moves = await dbOf(ctx)
    .select({ fromCell: eventMoves.fromCell })
    .from(eventMoves)
    .where(eq(eventMoves.eventId, eventId))
    .orderBy(desc(eventMoves.createdAt));
  const ids = [...new Set([current, ...moves.map((m) => m.fromCell)].filter((id): id is string => !!id))];
  if (!ids.length) return [];
  const rows = await dbOf(ctx)
    .select({ id: cells.id, baseUrl: cells.baseUrl })
    .from(cells)
    .where(inArray(cells.id, ids));
  return ids.flatMap((id) => rows.filter((r) => r.id === id));
}
