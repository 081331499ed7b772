import type { SalesStatus, SalesStatusAnswer } from '@onsale/contracts';
import { eq } from 'drizzle-orm';
import { CellCallError, cellCallRefusal } from '../cells/client';
import type { Services } from '../context';
import { cells, type EventRow, events, onsales, releaseRates } from '../db/schema';
import { dbOf, withTransaction } from '../db/tx';
import { eventForTenant } from '../events/events';
import { actorName, assertRole, type PromoterActor } from '../lib/actors';
import { conflict } from '../lib/errors';
import { cancelPrewarm } from '../prewarm/record';
import { setReleaseMode } from '../release-controller/override';
import { closeRoom } from '../waiting-room/room';

/** What pause, resume and cancel answer: the event's status after the change, and what a cancel ended in the cell. */
export interface OnsaleControlAnswer {
  eventId: string;
  status: EventRow['status'];
  /** A started onsale's cancellation in its cell (null for pause, resume, a cancel before the start, or no cell). */
  canceled: SalesStatusAnswer['canceled'] | null;
}

/** Who controls which event's sale. */
interface SaleControl {
  ctx: Services;
  actor: PromoterActor;
  eventId: string;
}

/**
 * A promoter pauses admission to their own running onsale: the cell refuses new holds (buyers see the
 * reason), the waiting room stops releasing, and it is recorded as a release decision like an operator's.
 */
export function pauseOnsale(o: SaleControl) {
  return setPaused({ ...o, paused: true });
}

/** A promoter resumes their paused onsale: the cell sells again and the release controller takes R back. */
export function resumeOnsale(o: SaleControl) {
  return setPaused({ ...o, paused: false });
}

async function setPaused({
  ctx,
  actor,
  eventId,
  paused,
}: SaleControl & { paused: boolean }): Promise<OnsaleControlAnswer> {
  assertRole(actor, 'manager');
  const ev = await eventForTenant(dbOf(ctx), actor.tenantId, eventId);
  if (paused && ev.status !== 'on_sale' && ev.status !== 'sold_out')
    throw conflict(`event is ${ev.status}; only a running onsale can be paused`, { status: ev.status });
  if (!paused && ev.status !== 'paused')
    throw conflict(`event is ${ev.status}; only a paused onsale can be resumed`, { status: ev.status });
  // The cell first: if it cannot be told, nothing changes here and the promoter can try again.
  await tellCell(ctx, ev.id, paused ? 'paused' : 'on_sale', paused ? 'paused by the promoter' : undefined);
  await setReleaseMode({
    ctx,
    eventId: ev.id,
    input: { mode: paused ? 'paused' : 'auto' },
    actor: actorName(actor),
    by: 'promoter',
  });
  return { eventId: ev.id, status: paused ? 'paused' : 'on_sale', canceled: null };
}

/**
 * Tells the event's purchase cell to pause, resume or cancel its sale. An event never loaded into
 * a cell (404 there) has nothing to stop; a cell that does not answer is unavailable (503, retry),
 * one that refuses is a conflict.
 */
async function tellCell(
  ctx: Services,
  eventId: string,
  status: SalesStatus,
  reason?: string,
): Promise<SalesStatusAnswer | null> {
  const [row] = await dbOf(ctx)
    .select({ id: cells.id, baseUrl: cells.baseUrl })
    .from(events)
    .innerJoin(cells, eq(cells.id, events.cellId))
    .where(eq(events.id, eventId));
  if (!row) return null;
  try {
    return await ctx.cells.setSales(row, eventId, { status, reason });
  } catch (err) {
    if (!(err instanceof CellCallError)) throw err;
    if (err.status === 404) return null;
    throw cellCallRefusal(err);
  }
}

/**
 * Cancels a started onsale: the cell stops holds and ends every order (unpaid ones cancelled,
 * paid ones refunded through the saga, tickets voided), then admission stops for good and the
 * event ends. Safe to repeat while the event is not ended: the cell's cancel is idempotent and
 * finishes what a failed call left.
 */
async function cancelStartedOnsale(ctx: Services, actor: PromoterActor, ev: EventRow): Promise<OnsaleControlAnswer> {
  const answer = await tellCell(ctx, ev.id, 'canceled', 'event cancelled by the promoter');
  await withTransaction(ctx, async (tx, inner) => {
    if (ev.status !== 'paused')
      await setReleaseMode({
        ctx: inner,
        eventId: ev.id,
        input: { mode: 'paused', reason: 'event cancelled' },
        actor: actorName(actor),
        by: 'promoter',
      });
    await tx.update(events).set({ status: 'ended', updatedAt: new Date() }).where(eq(events.id, ev.id));
    inner.transaction.afterCommit.push(() => closeRoom(ctx, ev.id));
  });
  ctx.log.info('event cancelled', { eventId: ev.id, actor: actorName(actor), cell: answer?.canceled });
  return { eventId: ev.id, status: 'ended', canceled: answer?.canceled ?? null };
}

/**
 * Cancels an onsale. Before it starts: the schedule and its release rate go, the event is a draft
 * again (its seat map kept), the waiting room closes and its pre-warm actions are to be deleted. A started onsale is cancelled in its cell
 * (see cancelStartedOnsale) and the event ends.
 */
export async function cancelOnsale({ ctx, actor, eventId }: SaleControl): Promise<OnsaleControlAnswer> {
  assertRole(actor, 'manager');
  const started = await eventForTenant(dbOf(ctx), actor.tenantId, eventId);
  if (['on_sale', 'paused', 'sold_out'].includes(started.status)) return cancelStartedOnsale(ctx, actor, started);
  return withTransaction(ctx, async (tx, inner) => {
    const ev = await eventForTenant(tx, actor.tenantId, eventId, { lock: true });
    if (ev.status !== 'scheduled')
      throw conflict(`event is ${ev.status}; only a scheduled onsale that has not started can be cancelled`, {
        status: ev.status,
      });
    const [o] = await tx.select().from(onsales).where(eq(onsales.eventId, ev.id)).for('update');
    if (o?.roomOpenedAt || o?.startedAt) throw conflict('the waiting room has opened; pause the onsale instead');
    await tx.delete(releaseRates).where(eq(releaseRates.eventId, ev.id));
    await tx.delete(onsales).where(eq(onsales.eventId, ev.id));
    await tx.update(events).set({ status: 'draft', onsaleAt: null, updatedAt: new Date() }).where(eq(events.id, ev.id));
    await cancelPrewarm(ctx, tx, ev.id);
    inner.transaction.afterCommit.push(async () => {
      await closeRoom(ctx, ev.id);
      ctx.log.info('onsale cancelled', { eventId: ev.id, actor: actorName(actor) });
    });
    return { eventId: ev.id, status: 'draft' as const, canceled: null };
  });
}
