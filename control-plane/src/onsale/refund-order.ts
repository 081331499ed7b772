import type { RefundOrderAnswer } from '@onsale/contracts';
import { eq } from 'drizzle-orm';
import { CellCallError } from '../cells/client';
import type { Services } from '../context';
import { cells } from '../db/schema';
import { eventForTenant } from '../events/events';
import { actorName, assertRole, type PromoterActor } from '../lib/actors';
import { conflict, notFound } from '../lib/errors';

/**
 * A promoter cancels one paid order (a buyer who cannot come, a fraud case): the event's cell
 * refunds it through the saga and voids its tickets at once; when Stripe confirms the refund its
 * seats go back on sale, once, and the release controller, seeing places again, lets the waiting
 * room admit buyers for them. Repeating the call answers the order's state and refunds nothing twice.
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
  const ev = await eventForTenant(ctx.db, actor.tenantId, eventId);
  const [cell] = ev.cellId
    ? await ctx.db.select({ id: cells.id, baseUrl: cells.baseUrl }).from(cells).where(eq(cells.id, ev.cellId))
    : [];
  if (!cell) throw notFound('order');
  try {
    const answer = await ctx.cells.refundOrder(cell, ev.id, orderId, { reason });
    ctx.log.info('order refund requested', { eventId, orderId, status: answer.status, actor: actorName(actor) });
    return answer;
  } catch (err) {
    if (!(err instanceof CellCallError)) throw err;
    if (err.status === 404) throw notFound('order');
    // The cell's reason (an order not paid, say) is the promoter's answer too.
    const cellError = (err.body as { error?: { message?: string; details?: unknown } } | undefined)?.error;
    if (err.status === 409) throw conflict(cellError?.message ?? 'the order cannot be refunded', cellError?.details);
    throw err;
  }
}
