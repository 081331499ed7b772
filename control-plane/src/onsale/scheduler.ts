import { and, eq, inArray, isNotNull, isNull, lte, or } from 'drizzle-orm';
import type { Services } from '../context';
import { events, onsales, releaseRates } from '../db/schema';
import { bumpDirectoryVersion } from '../db/sql';
import { commitmentOf } from '../waiting-room/fairness';
import { closeRoom, configureRoom, openRoom, ROOM_LIVE, roomConfigured, startReleasing } from '../waiting-room/room';
import { attemptLoad } from './load';

/**
 * One pass of the onsale scheduler: rebuild rooms Redis lost, load events into their cells (retrying
 * failures), open waiting rooms, start onsales whose time has come (only once loaded), end past events.
 */
export async function runSchedulerTick(ctx: Services) {
  const now = ctx.clock.now();
  const summary = {
    restored: await restoreLostRooms(ctx),
    loaded: 0,
    loadFailed: 0,
    opened: 0,
    started: 0,
    blocked: 0,
    ended: 0,
  };

  const due = await ctx.db
    .select({ eventId: onsales.eventId })
    .from(onsales)
    .innerJoin(events, eq(events.id, onsales.eventId))
    .where(
      and(
        inArray(events.status, ['draft', 'scheduled']),
        or(
          and(inArray(onsales.loadStatus, ['pending', 'failed']), lte(onsales.nextLoadAt, now)),
          and(eq(onsales.loadStatus, 'loading'), lte(onsales.loadLeaseUntil, now)),
        ),
      ),
    )
    .limit(20);
  for (const { eventId } of due) {
    const r = await attemptLoad({ ctx, eventId });
    if (r?.loadStatus === 'loaded') summary.loaded++;
    else if (r?.loadStatus === 'failed' || r?.loadStatus === 'gave_up') summary.loadFailed++;
  }

  const opening = await ctx.db
    .update(onsales)
    .set({ roomOpenedAt: now })
    .where(and(isNull(onsales.roomOpenedAt), lte(onsales.roomOpensAt, now)))
    .returning({ eventId: onsales.eventId });
  for (const { eventId } of opening) {
    await openRoom(ctx, eventId);
    summary.opened++;
  }

  const starting = await ctx.db
    .select({ eventId: onsales.eventId, loadStatus: onsales.loadStatus })
    .from(onsales)
    .innerJoin(events, eq(events.id, onsales.eventId))
    .where(and(eq(events.status, 'scheduled'), lte(onsales.onsaleAt, now)));
  for (const s of starting) {
    if (s.loadStatus !== 'loaded') {
      summary.blocked++;
      ctx.log.warn('onsale time reached but the event is not loaded into its cell; not releasing', {
        eventId: s.eventId,
        loadStatus: s.loadStatus,
      });
      continue;
    }
    const [ev] = await ctx.db
      .update(events)
      .set({ status: 'on_sale', updatedAt: now })
      .where(and(eq(events.id, s.eventId), eq(events.status, 'scheduled')))
      .returning({ id: events.id });
    if (!ev) continue;
    await ctx.db.update(onsales).set({ startedAt: now }).where(eq(onsales.eventId, s.eventId));
    const [rr] = await ctx.db.select().from(releaseRates).where(eq(releaseRates.eventId, s.eventId));
    await startReleasing(ctx, s.eventId, rr?.mode === 'paused' ? 0 : (rr?.rate ?? 1));
    ctx.log.info('onsale started', { eventId: s.eventId, rate: rr?.rate });
    summary.started++;
  }

  const ending = await ctx.db
    .update(events)
    .set({ status: 'ended', updatedAt: now })
    .where(and(inArray(events.status, ['scheduled', 'on_sale', 'paused', 'sold_out']), lte(events.startsAt, now)))
    .returning({ id: events.id });
  if (ending.length) await bumpDirectoryVersion(ctx.db);
  for (const { id } of ending) {
    await closeRoom(ctx, id);
    summary.ended++;
  }
  return summary;
}

/**
 * Rebuilds, from the onsale's record, every live room Redis no longer has (a restart without its data, a
 * failover to a replica that had not caught up): its settings, open once its time came, releasing at the
 * event's R once the onsale started. The record holds no queue: buyers who were waiting join again (at the
 * back once the room is open); admitted buyers keep their tokens, which the cells verify without Redis.
 */
async function restoreLostRooms(ctx: Services): Promise<number> {
  const live = await ctx.db
    .select({ onsale: onsales, cellId: events.cellId, epoch: events.directoryEpoch, rr: releaseRates })
    .from(onsales)
    .innerJoin(events, eq(events.id, onsales.eventId))
    .leftJoin(releaseRates, eq(releaseRates.eventId, onsales.eventId))
    .where(and(inArray(events.status, [...ROOM_LIVE]), isNotNull(events.cellId)));
  if (!live.length) return 0;
  const present = await Promise.all(live.map((r) => roomConfigured(ctx, r.onsale.eventId)));
  const lost = live.filter((_, i) => !present[i]);
  for (const { onsale: o, cellId, epoch, rr } of lost) {
    await configureRoom(ctx, {
      eventId: o.eventId,
      opensAt: o.roomOpensAt,
      onsaleAt: o.onsaleAt,
      cellId: cellId!,
      epoch,
      maxActive: o.maxActiveShoppers,
      rate: rr?.rate ?? 1,
      fairnessCommitment: commitmentOf(o.fairnessSeed),
    });
    if (o.startedAt) await startReleasing(ctx, o.eventId, rr?.mode === 'paused' ? 0 : (rr?.rate ?? 1));
    else if (o.roomOpenedAt) await openRoom(ctx, o.eventId);
    ctx.log.warn('waiting room rebuilt from the onsale record: Redis had lost it', { eventId: o.eventId });
  }
  return lost.length;
}
