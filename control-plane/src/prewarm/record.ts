import { and, eq, ne, or, sql } from 'drizzle-orm';
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
 * Writes an onsale's pre-warm and marks the neighbours of its windows (old and new) due again: a scale-in inside
 * another's window gives back that one's capacity, not the stacks' sizing. Every row it will write is locked first,
 * in event order: an evacuation flips a cell's events side by side, and two flips that each wrote their own row and
 * then the other's deadlocked.
 */
async function change(
  tx: Tx,
  eventId: string,
  windows: (PrewarmWindow | undefined)[],
  now: Date,
  write: () => unknown,
) {
  const known = windows.filter((w) => w !== undefined);
  await tx
    .select({ eventId: prewarms.eventId })
    .from(prewarms)
    .where(or(eq(prewarms.eventId, eventId), ...known.map((w) => overlapping(eventId, w))))
    .orderBy(prewarms.eventId)
    .for('update');
  await write();
  for (const w of known) await tx.update(prewarms).set(due(now)).where(overlapping(eventId, w));
}

async function windowOf(tx: Tx, eventId: string): Promise<PrewarmWindow | undefined> {
  const [row] = await tx.select({ window: prewarms.window }).from(prewarms).where(eq(prewarms.eventId, eventId));
  return row?.window;
}

/** Records, in the schedule's transaction, the window the onsale's actions must have (a reschedule moves them). */
export async function recordPrewarm(ctx: Services, tx: Tx, eventId: string, window: PrewarmWindow): Promise<void> {
  const now = ctx.clock.now();
  await change(tx, eventId, [await windowOf(tx, eventId), window], now, () =>
    tx
      .insert(prewarms)
      .values({ eventId, window, nextAttemptAt: now })
      .onConflictDoUpdate({ target: prewarms.eventId, set: { window, cancelled: false, ...due(now) } }),
  );
}

/** Records, in the cancel's transaction, that the onsale's actions are to go. */
export async function cancelPrewarm(ctx: Services, tx: Tx, eventId: string): Promise<void> {
  const now = ctx.clock.now();
  await change(tx, eventId, [await windowOf(tx, eventId)], now, () =>
    tx
      .update(prewarms)
      .set({ cancelled: true, ...due(now) })
      .where(eq(prewarms.eventId, eventId)),
  );
}

/**
 * Records, in an evacuation's flip, that the event's capacity follows it to its new cell: the sync deletes the
 * actions from the cell it left and puts them on the target's services. A cancelled pre-warm stays cancelled.
 */
export async function movePrewarm(tx: Tx, eventId: string, toCell: string, now: Date): Promise<void> {
  await change(tx, eventId, [await windowOf(tx, eventId)], now, () =>
    tx
      .update(prewarms)
      .set({ window: sql`jsonb_set(${prewarms.window}, '{cellId}', to_jsonb(${toCell}::text))`, ...due(now) })
      .where(and(eq(prewarms.eventId, eventId), eq(prewarms.cancelled, false))),
  );
}
