import { DomainError, type FieldIssue, MAX_SEATS_PER_HOLD } from '@onsale/contracts';
import { eq } from 'drizzle-orm';
import { leastLoadedCell } from '../cells/cells';
import type { Services } from '../context';
import { type CapacityPlan, events, gaAreas, onsales, releaseRates } from '../db/schema';
import { bumpDirectoryVersion } from '../db/sql';
import { withTransaction } from '../db/tx';
import { eventForTenant, startOrderIssues } from '../events/events';
import { assertRole, type PromoterActor } from '../lib/actors';
import { conflict } from '../lib/errors';
import { prewarmWindow, recordPrewarm } from '../prewarm/record';
import { commitmentOf, newFairnessSecrets } from '../waiting-room/fairness';
import { configureRoom } from '../waiting-room/room';

export interface ScheduleOnsaleInput {
  roomOpensAt: Date;
  onsaleAt: Date;
  /** Seats a buyer may take in one order (the cell's maxSeatsPerOrder). */
  perBuyerLimit: number;
  /** Ceiling on R, buyers released per second. */
  maxReleaseRate: number;
  /** Floor on R while the controller cuts it (default 1/s). */
  minReleaseRate?: number;
  /** Cap on concurrently admitted buyers (released and not expired); none by default. */
  maxActiveShoppers?: number | null;
  holdTtlSeconds?: number;
  /** The tasks each role is raised to before the room opens (a capacity plan's); a role left out takes the default. */
  capacity?: Partial<CapacityPlan>;
}

/** How far in the past a room or sale time may be: enough for "now" sent from a promoter's clock. */
const PAST_GRACE_MS = 5 * 60_000;

/**
 * A time already past opens the room or starts the sale at the scheduler's next tick, before its pre-warm and its
 * announcement: a mistyped year or day would start a stadium cold. Refused, unless it is the time the onsale already
 * has (a reschedule keeps the room it opened).
 */
function pastTimeIssues(
  ctx: Services,
  input: Pick<ScheduleOnsaleInput, 'roomOpensAt' | 'onsaleAt'>,
  prev: { roomOpensAt: Date; onsaleAt: Date } | undefined,
): FieldIssue[] {
  const earliest = ctx.clock.now().getTime() - PAST_GRACE_MS;
  return (['roomOpensAt', 'onsaleAt'] as const).flatMap((field) =>
    input[field].getTime() < earliest && input[field].getTime() !== prev?.[field].getTime()
      ? [
          {
            path: field,
            message: `is more than ${PAST_GRACE_MS / 60_000} minutes in the past; to open now, send the current time`,
          },
        ]
      : [],
  );
}

export const initialRate = (ctx: Services, floor: number, ceiling: number) =>
  Math.min(ceiling, Math.max(floor, Math.round(ceiling * ctx.config.CONTROLLER_INITIAL_FRACTION)));

/**
 * Schedules (or reschedules, until the onsale starts) an event's onsale. The event is placed if
 * it is not yet, the scheduler is asked to load it into its cell (idempotently) before the room
 * opens, the waiting room is configured, and its capacity is scheduled: the pre-warm the worker
 * puts on AWS as scheduled scaling actions (prewarm/sync.ts), moved by a reschedule.
 */
export async function scheduleOnsale({
  ctx,
  actor,
  eventId,
  input,
}: {
  ctx: Services;
  actor: PromoterActor;
  eventId: string;
  input: ScheduleOnsaleInput;
}) {
  assertRole(actor, 'manager');
  const floor = input.minReleaseRate ?? 1;
  const issues: { path: string; message: string }[] = [];
  if (input.roomOpensAt.getTime() > input.onsaleAt.getTime())
    issues.push({ path: 'roomOpensAt', message: 'the waiting room must open at or before the onsale' });
  if (floor > input.maxReleaseRate)
    issues.push({ path: 'minReleaseRate', message: 'the floor must not exceed maxReleaseRate' });
  // The cell loads the limit as the event's largest order, which a hold bounds: a larger one would fail the load
  // after the room opened, and the onsale would never start.
  if (!Number.isInteger(input.perBuyerLimit) || input.perBuyerLimit < 1 || input.perBuyerLimit > MAX_SEATS_PER_HOLD)
    issues.push({ path: 'perBuyerLimit', message: `a whole number from 1 to ${MAX_SEATS_PER_HOLD}` });
  return withTransaction(ctx, async (tx, inner) => {
    const ev = await eventForTenant(tx, actor.tenantId, eventId, { lock: true });
    if (ev.status !== 'draft' && ev.status !== 'scheduled')
      throw conflict(`event is ${ev.status}; its onsale can no longer be rescheduled`);
    issues.push(...startOrderIssues({ startsAt: ev.startsAt, onsaleAt: input.onsaleAt }, 'onsaleAt'));
    const [prev] = await tx.select().from(onsales).where(eq(onsales.eventId, ev.id));
    issues.push(...pastTimeIssues(ctx, input, prev));
    if (ev.seatCount === 0) {
      // An event of general-admission areas only has no seats and is still ready to sell.
      const [area] = await tx.select({ id: gaAreas.id }).from(gaAreas).where(eq(gaAreas.eventId, ev.id)).limit(1);
      if (!area) issues.push({ path: 'seatMap', message: 'upload a seat map first' });
    }
    if (issues.length) throw new DomainError('validation_failed', 'the onsale schedule is not valid', { issues });
    let cellId = ev.cellId;
    let epoch = ev.directoryEpoch;
    if (!cellId) {
      cellId = (await leastLoadedCell(tx)).id;
      epoch += 1;
      await tx.update(events).set({ cellId, directoryEpoch: epoch }).where(eq(events.id, ev.id));
      await bumpDirectoryVersion(tx);
    }
    const values = {
      tenantId: actor.tenantId,
      roomOpensAt: input.roomOpensAt,
      onsaleAt: input.onsaleAt,
      perBuyerLimit: input.perBuyerLimit,
      maxReleaseRate: input.maxReleaseRate,
      minReleaseRate: floor,
      maxActiveShoppers: input.maxActiveShoppers ?? null,
      holdTtlSeconds: input.holdTtlSeconds ?? 600,
      updatedAt: new Date(),
    };
    // The cell's copy carries holdTtl and maxSeatsPerOrder: a change means loading again.
    const reload =
      !prev ||
      prev.perBuyerLimit !== values.perBuyerLimit ||
      prev.holdTtlSeconds !== values.holdTtlSeconds ||
      prev.loadStatus !== 'loaded';
    const [row] = await tx
      .insert(onsales)
      // The fairness secrets are drawn once, here: a reschedule keeps the seed whose commitment is published.
      .values({
        eventId: ev.id,
        ...values,
        ...newFairnessSecrets(),
        loadStatus: 'pending',
        nextLoadAt: ctx.clock.now(),
      })
      .onConflictDoUpdate({
        target: onsales.eventId,
        set: reload
          ? { ...values, loadStatus: 'pending', loadAttempts: 0, nextLoadAt: ctx.clock.now(), loadLeaseUntil: null }
          : values,
      })
      .returning();
    const rate = initialRate(ctx, floor, input.maxReleaseRate);
    const [rr] = await tx
      .insert(releaseRates)
      .values({ eventId: ev.id, rate, mode: 'auto' })
      .onConflictDoUpdate({ target: releaseRates.eventId, set: { rate, updatedAt: ctx.clock.now() } })
      .returning();
    await tx
      .update(events)
      .set({ status: 'scheduled', onsaleAt: input.onsaleAt, updatedAt: new Date() })
      .where(eq(events.id, ev.id));
    await recordPrewarm(
      ctx,
      tx,
      ev.id,
      prewarmWindow(ctx, {
        cellId,
        roomOpensAt: input.roomOpensAt,
        onsaleAt: input.onsaleAt,
        capacity: { ...ctx.config.PREWARM_DEFAULT_CAPACITY, ...input.capacity },
      }),
    );
    inner.transaction.afterCommit.push(async () => {
      await configureRoom(ctx, {
        eventId: ev.id,
        opensAt: input.roomOpensAt,
        onsaleAt: input.onsaleAt,
        cellId,
        epoch,
        maxActive: input.maxActiveShoppers ?? null,
        rate: rr!.rate,
        fairnessCommitment: commitmentOf(row!.fairnessSeed),
      });
      ctx.log.info('onsale scheduled', { eventId: ev.id, cellId, onsaleAt: input.onsaleAt.toISOString() });
    });
    return row!;
  });
}
