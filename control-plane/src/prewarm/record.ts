import { and, eq, ne, sql } from 'drizzle-orm';
import type { Services } from '../context';
import type { Tx } from '../db/client';
import { type CapacityPlan, type Prewarm, type PrewarmWindow, prewarms } from '../db/schema';

/**
 * The window an onsale is warm for: from PREWARM_LEAD_SECONDS before its room opens (the crowd arrives with the
 * room, and tasks take minutes to start) to PREWARM_HOLD_SECONDS after its start, at the onsale's own capacity or
 * the process default.
 */
export function prewarmWindow(
  ctx: Services,
  o: { cellId: string; roomOpensAt: Date; onsaleAt: Date; capacity?: CapacityPlan },
): PrewarmWindow {
  const c = ctx.config;
  return {
    cellId: o.cellId,
    scaleOutAt: new Date(o.roomOpensAt.getTime() - c.PREWARM_LEAD_SECONDS * 1000).toISOString(),
    scaleInAt: new Date(o.onsaleAt.getTime() + c.PREWARM_HOLD_SECONDS * 1000).toISOString(),
    capacity: o.capacity ?? c.PREWARM_DEFAULT_CAPACITY,
  };
}

/**
 * The state a change leaves for the worker's sync: a new version, due now, no failures counted. A sync under way
 * keeps its lease (two syncs of one onsale at once could put an older version's actions last); it sees the new
 * version when it finishes and leaves the row pending for the next pass.
 */
const due = (now: Date) => {
  const syncing = sql`${prewarms.status} = 'syncing' and ${prewarms.leaseUntil} > ${now}`;
  return {
    version: sql`${prewarms.version} + 1`,
    status: sql<Prewarm['status']>`case when ${syncing} then 'syncing' else 'pending' end`,
    attempts: 0,
    lastError: null,
    nextAttemptAt: now,
    leaseUntil: sql<Date | null>`case when ${syncing} then ${prewarms.leaseUntil} end`,
    updatedAt: now,
  };
};

/** The pre-warms other than this one whose windows meet `window`: the actions they put depend on it (prewarm/sync.ts). */
export const overlapping = (eventId: string, window: Pick<PrewarmWindow, 'scaleOutAt' | 'scaleInAt'>) =>
  and(
    ne(prewarms.eventId, eventId),
    eq(prewarms.cancelled, false),
    sql`(${prewarms.window}->>'scaleOutAt')::timestamptz < ${window.scaleInAt}::timestamptz`,
    sql`(${prewarms.window}->>'scaleInAt')::timestamptz > ${window.scaleOutAt}::timestamptz`,
  );

/**
 * An onsale's window changed (or went): the onsales whose windows met the old one or meet the new one are synced
 * again, since a scale-in inside another's window gives back that one's capacity, not the stacks' sizing.
 */
async function resyncNeighbours(tx: Tx, eventId: string, windows: (PrewarmWindow | undefined)[], now: Date) {
  for (const w of windows) if (w) await tx.update(prewarms).set(due(now)).where(overlapping(eventId, w));
}

async function windowOf(tx: Tx, eventId: string): Promise<PrewarmWindow | undefined> {
  const [row] = await tx.select({ window: prewarms.window }).from(prewarms).where(eq(prewarms.eventId, eventId));
  return row?.window;
}

/** Records, in the schedule's transaction, the window the onsale's actions must have (a reschedule moves them). */
export async function recordPrewarm(ctx: Services, tx: Tx, eventId: string, window: PrewarmWindow): Promise<void> {
  const before = await windowOf(tx, eventId);
  await tx
    .insert(prewarms)
    .values({ eventId, window, nextAttemptAt: ctx.clock.now() })
    .onConflictDoUpdate({ target: prewarms.eventId, set: { window, cancelled: false, ...due(ctx.clock.now()) } });
  await resyncNeighbours(tx, eventId, [before, window], ctx.clock.now());
}

/** Records, in the cancel's transaction, that the onsale's actions are to go. */
export async function cancelPrewarm(ctx: Services, tx: Tx, eventId: string): Promise<void> {
  await tx
    .update(prewarms)
    .set({ cancelled: true, ...due(ctx.clock.now()) })
    .where(eq(prewarms.eventId, eventId));
  await resyncNeighbours(tx, eventId, [await windowOf(tx, eventId)], ctx.clock.now());
}

/**
 * Records, in an evacuation's flip, that the event's capacity follows it to its new cell: the sync deletes the
 * actions from the cell it left and puts them on the target's services. A cancelled pre-warm stays cancelled.
 */
export async function movePrewarm(tx: Tx, eventId: string, toCell: string, now: Date): Promise<void> {
  await tx
    .update(prewarms)
    .set({ window: sql`jsonb_set(${prewarms.window}, '{cellId}', to_jsonb(${toCell}::text))`, ...due(now) })
    .where(and(eq(prewarms.eventId, eventId), eq(prewarms.cancelled, false)));
  await resyncNeighbours(tx, eventId, [await windowOf(tx, eventId)], now);
}
