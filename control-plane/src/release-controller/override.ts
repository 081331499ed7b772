import { CellSignals, DomainError } from '@onsale/contracts';
import { and, desc, eq, inArray } from 'drizzle-orm';
import { z } from 'zod';
import type { Services } from '../context';
import { controllerDecisions, events, onsales, type ReleaseMode, releaseRates } from '../db/schema';
import { dbOf, withTransaction } from '../db/tx';
import { conflict, notFound } from '../lib/errors';
import { setRoomControl } from '../waiting-room/room';

/** An operator pauses, resumes (back to the controller) or pins R for an event; recorded like any decision. */
export async function setReleaseMode({
  ctx,
  eventId,
  input,
  actor,
  by = 'operator',
}: {
  ctx: Services;
  eventId: string;
  input: { mode: ReleaseMode; rate?: number; reason?: string };
  actor: string;
  /** Who is named in the decision's reason (promoters pause and resume their own onsales from the console). */
  by?: 'operator' | 'promoter';
}) {
  if (input.mode === 'pinned' && (input.rate === undefined || input.rate < 0)) {
    throw new DomainError('validation_failed', 'a pinned mode needs a rate', {
      issues: [{ path: 'rate', message: 'required when mode is pinned' }],
    });
  }
  const now = ctx.clock.now();
  return withTransaction(ctx, async (tx, inner) => {
    const [row] = await tx
      .select({ rr: releaseRates, on: onsales, ev: events })
      .from(releaseRates)
      .innerJoin(onsales, eq(onsales.eventId, releaseRates.eventId))
      .innerJoin(events, eq(events.id, releaseRates.eventId))
      .where(eq(releaseRates.eventId, eventId))
      .for('update');
    if (!row) throw notFound('onsale');
    if (row.ev.status === 'ended') throw conflict('the onsale has ended');
    const pinned =
      input.mode === 'pinned'
        ? Math.min(row.on.maxReleaseRate, Math.max(row.on.minReleaseRate, input.rate ?? 0))
        : null;
    const rate = input.mode === 'paused' ? row.rr.rate : (pinned ?? row.rr.rate);
    await tx
      .update(releaseRates)
      .set({ mode: input.mode, pinnedRate: pinned, rate, updatedAt: now })
      .where(eq(releaseRates.eventId, eventId));
    await tx.insert(controllerDecisions).values({
      eventId,
      cellId: row.ev.cellId,
      at: now,
      mode: input.mode,
      signals: null,
      oldRate: row.rr.rate,
      newRate: input.mode === 'paused' ? 0 : rate,
      reason: `${input.mode === 'auto' ? 'resumed' : input.mode} by ${by}${input.reason ? `: ${input.reason}` : ''}`,
      actor,
    });
    if (input.mode === 'paused') {
      await tx
        .update(events)
        .set({ status: 'paused', updatedAt: now })
        .where(and(eq(events.id, eventId), inArray(events.status, ['on_sale', 'sold_out'])));
    } else if (row.ev.status === 'paused') {
      await tx
        .update(events)
        .set({ status: 'on_sale', updatedAt: now })
        .where(and(eq(events.id, eventId), eq(events.status, 'paused')));
    }
    const res = { mode: input.mode, rate: input.mode === 'paused' ? 0 : rate, pinnedRate: pinned };
    inner.transaction.afterCommit.push(async () => {
      await setRoomControl(ctx, eventId, { rate: res.rate, paused: res.mode === 'paused' });
      ctx.log.info('release mode set', { eventId, mode: res.mode, rate: res.rate, actor });
    });
    return res;
  });
}

const RecordedSignals = z.union([z.object({ unavailable: z.literal(true) }), CellSignals.partial()]);

/**
 * What a decision's recorded signals may tell a reader of one event's decisions. The controller records the cell's
 * whole answer, whose availableSeats names every event on the cell with its live inventory, other tenants' too: the
 * reader gets the cell's health figures (what R was decided on) and the seats of the event asked about, and no other
 * event's id or figure. Parsing keeps only the fields CellSignals declares, so a field the cell adds later stays out
 * until it is declared (and scoped) here.
 */
function signalsFor(eventId: string, recorded: unknown) {
  if (recorded === null) return null;
  const parsed = RecordedSignals.safeParse(recorded);
  if (!parsed.success) return null;
  if ('unavailable' in parsed.data) return parsed.data;
  const { availableSeats, ...cell } = parsed.data;
  const seats = availableSeats?.[eventId];
  return { ...cell, availableSeats: seats === undefined ? {} : { [eventId]: seats } };
}

/** One event's decisions, newest first; the caller has checked the event is theirs to read. */
export async function listDecisions({ ctx, eventId, limit }: { ctx: Services; eventId: string; limit: number }) {
  const rows = await dbOf(ctx)
    .select()
    .from(controllerDecisions)
    .where(eq(controllerDecisions.eventId, eventId))
    .orderBy(desc(controllerDecisions.at), desc(controllerDecisions.id))
    .limit(limit);
  return rows.map((r) => ({
    id: r.id,
    at: r.at.toISOString(),
    cellId: r.cellId,
    mode: r.mode,
    oldRate: r.oldRate,
    newRate: r.newRate,
    reason: r.reason,
    actor: r.actor,
    signals: signalsFor(eventId, r.signals),
  }));
}
