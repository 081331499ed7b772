import { eq } from 'drizzle-orm';
import type { Services } from '../context';
import { onsales, prewarms, releaseRates } from '../db/schema';
import { dbOf } from '../db/tx';
import { eventForTenant } from '../events/events';
import { notFound } from '../lib/errors';
import { roomStats } from '../waiting-room/room';

/** What the promoter's console shows: the schedule, whether the event is ready in its cell, its pre-warm, R and the room. */
export async function getOnsale({ ctx, tenantId, eventId }: { ctx: Services; tenantId?: string; eventId: string }) {
  if (tenantId) await eventForTenant(dbOf(ctx), tenantId, eventId);
  const [o] = await dbOf(ctx).select().from(onsales).where(eq(onsales.eventId, eventId));
  if (!o) throw notFound('onsale');
  const [rr] = await dbOf(ctx).select().from(releaseRates).where(eq(releaseRates.eventId, eventId));
  const [p] = await dbOf(ctx).select().from(prewarms).where(eq(prewarms.eventId, eventId));
  const room = await roomStats(ctx, eventId);
  return {
    eventId,
    roomOpensAt: o.roomOpensAt.toISOString(),
    onsaleAt: o.onsaleAt.toISOString(),
    perBuyerLimit: o.perBuyerLimit,
    maxReleaseRate: o.maxReleaseRate,
    minReleaseRate: o.minReleaseRate,
    maxActiveShoppers: o.maxActiveShoppers,
    holdTtlSeconds: o.holdTtlSeconds,
    ready: o.loadStatus === 'loaded',
    load: {
      status: o.loadStatus,
      attempts: o.loadAttempts,
      lastError: o.lastLoadError,
      lastAttemptAt: o.lastLoadAt?.toISOString() ?? null,
      nextAttemptAt: o.loadStatus === 'failed' || o.loadStatus === 'pending' ? o.nextLoadAt.toISOString() : null,
      loadedAt: o.loadedAt?.toISOString() ?? null,
      cellId: o.loadedCellId,
      directoryEpoch: o.loadedEpoch,
    },
    roomOpenedAt: o.roomOpenedAt?.toISOString() ?? null,
    startedAt: o.startedAt?.toISOString() ?? null,
    release: { mode: rr?.mode ?? 'auto', rate: rr?.rate ?? 0, pinnedRate: rr?.pinnedRate ?? null },
    // The capacity scheduled for it, and whether AWS has it yet (prewarm/sync.ts).
    prewarm: p
      ? {
          status: p.status,
          cellId: p.window.cellId,
          scaleOutAt: p.window.scaleOutAt,
          scaleInAt: p.window.scaleInAt,
          capacity: p.window.capacity,
          attempts: p.attempts,
          lastError: p.lastError,
          syncedAt: p.syncedAt?.toISOString() ?? null,
        }
      : null,
    room,
  };
}
