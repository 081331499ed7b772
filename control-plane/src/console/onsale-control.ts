import type { SalesStatus, SalesStatusAnswer } from '@onsale/contracts';
import { eq } from 'drizzle-orm';
import { CellCallError } from '../cells/client';
import type { Services } from '../context';
import { cells, events, onsales, releaseRates } from '../db/schema';
import { eventForTenant } from '../events/events';
import { actorName, assertRole, type PromoterActor } from '../lib/actors';
import { conflict } from '../lib/errors';
import { setReleaseMode } from '../release-controller/override';
import { closeRoom } from '../waiting-room/room';

/** A promoter pauses or resumes admission to their own onsale; recorded as a release decision like an operator's. */
export async function setOnsalePaused({
  ctx,
  actor,
  eventId,
  paused,
}: {
  ctx: Services;
  actor: PromoterActor;
  eventId: string;
  paused: boolean;
}) {
  assertRole(actor, 'manager');
  const ev = await eventForTenant(ctx.db, actor.tenantId, eventId);
  if (paused && ev.status !== 'on_sale' && ev.status !== 'sold_out')
    throw conflict(`event is ${ev.status}; only a running onsale can be paused`);
  if (!paused && ev.status !== 'paused') throw conflict(`event is ${ev.status}; only a paused onsale can be resumed`);
  // The cell first: if it cannot be told, nothing changes here and the promoter can try again.
  await tellCell(ctx, ev.id, paused ? 'paused' : 'on_sale', paused ? 'paused by the promoter' : undefined);
  return setReleaseMode({
    ctx,
    eventId: ev.id,
    input: { mode: paused ? 'paused' : 'auto' },
    actor: actorName(actor),
    by: 'promoter',
  });
}

/**
 * Tells the event's purchase cell to pause, resume or cancel its sale. An event never loaded into
 * a cell (404 there) has nothing to stop; any other failure is the caller's to see.
 */
async function tellCell(
  ctx: Services,
  eventId: string,
  status: SalesStatus,
  reason?: string,
): Promise<SalesStatusAnswer | null> {
  const [row] = await ctx.db
    .select({ id: cells.id, baseUrl: cells.baseUrl })
    .from(events)
    .innerJoin(cells, eq(cells.id, events.cellId))
    .where(eq(events.id, eventId));
  if (!row) return null;
  try {
    return await ctx.cells.setSales(row, eventId, { status, reason });
  } catch (err) {
    if (err instanceof CellCallError && err.status === 404) return null;
    throw err;
  }
}

/**
 * Cancels a started onsale: the cell stops holds and ends every order (unpaid ones cancelled,
 * paid ones refunded through the saga, tickets voided), then admission stops for good and the
 * event ends. Safe to repeat: the cell's cancel is idempotent and finishes what a failed call left.
 */
async function cancelStartedOnsale(ctx: Services, actor: PromoterActor, eventId: string, status: string) {
  const answer = await tellCell(ctx, eventId, 'canceled', 'event cancelled by the promoter');
  if (status !== 'paused')
    await setReleaseMode({
      ctx,
      eventId,
      input: { mode: 'paused', reason: 'event cancelled' },
      actor: actorName(actor),
      by: 'promoter',
    });
  await ctx.db.update(events).set({ status: 'ended', updatedAt: new Date() }).where(eq(events.id, eventId));
  await closeRoom(ctx, eventId);
  ctx.log.info('event cancelled', { eventId, actor: actorName(actor), cell: answer?.canceled });
  return answer;
}

/**
 * Cancels a scheduled onsale before it starts: the schedule and its release rate go, the event is
 * a draft again (its seat map kept) and the waiting room closes. A started onsale is cancelled in
 * its cell (see cancelStartedOnsale) and ends.
 */
export async function cancelOnsale({ ctx, actor, eventId }: { ctx: Services; actor: PromoterActor; eventId: string }) {
  assertRole(actor, 'manager');
  const started = await eventForTenant(ctx.db, actor.tenantId, eventId);
  if (['on_sale', 'paused', 'sold_out'].includes(started.status))
    return cancelStartedOnsale(ctx, actor, started.id, started.status);
  await ctx.db.transaction(async (tx) => {
    const ev = await eventForTenant(tx, actor.tenantId, eventId, { lock: true });
    if (ev.status !== 'scheduled')
      throw conflict(`event is ${ev.status}; only a scheduled onsale that has not started can be cancelled`);
    const [o] = await tx.select().from(onsales).where(eq(onsales.eventId, ev.id)).for('update');
    if (o?.roomOpenedAt || o?.startedAt) throw conflict('the waiting room has opened; pause the onsale instead');
    await tx.delete(releaseRates).where(eq(releaseRates.eventId, ev.id));
    await tx.delete(onsales).where(eq(onsales.eventId, ev.id));
    await tx.update(events).set({ status: 'draft', onsaleAt: null, updatedAt: new Date() }).where(eq(events.id, ev.id));
  });
  await closeRoom(ctx, eventId);
  ctx.log.info('onsale cancelled', { eventId, actor: actorName(actor) });
}
