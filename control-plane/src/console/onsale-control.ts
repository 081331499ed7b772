import { eq } from 'drizzle-orm';
import type { Services } from '../context';
import { events, onsales, releaseRates } from '../db/schema';
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
  return setReleaseMode({
    ctx,
    eventId: ev.id,
    input: { mode: paused ? 'paused' : 'auto' },
    actor: actorName(actor),
    by: 'promoter',
  });
}

/**
 * Cancels a scheduled onsale before it starts: the schedule and its release rate go, the event is
 * a draft again (its seat map kept) and the waiting room closes. A started onsale is paused, not
 * cancelled: ending a live sale needs a cell verb that stops holds, which does not exist yet.
 */
export async function cancelOnsale({ ctx, actor, eventId }: { ctx: Services; actor: PromoterActor; eventId: string }) {
  assertRole(actor, 'manager');
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
