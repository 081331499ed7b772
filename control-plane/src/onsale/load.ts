import { DomainError, type EventLoad, type EventLoadAnswer } from '@onsale/contracts';
import { and, eq, inArray, lte, or, sql } from 'drizzle-orm';
import { CellCallError } from '../cells/client';
import type { Services } from '../context';
import { cells, events, onsales } from '../db/schema';
import { type DbScope, dbOf } from '../db/tx';
import { notFound } from '../lib/errors';

/** The body of the cell's load endpoint (contracts' EventLoad), from the directory and the seat map. */
export async function buildEventLoad(
  ctx: DbScope,
  eventId: string,
): Promise<{ body: EventLoad; cell: { id: string; baseUrl: string }; seatMapVersion: number }> {
  const [row] = await dbOf(ctx)
    .select({ ev: events, on: onsales, cell: cells })
    .from(events)
    .innerJoin(onsales, eq(onsales.eventId, events.id))
    .leftJoin(cells, eq(cells.id, events.cellId))
    .where(eq(events.id, eventId));
  if (!row) throw notFound('scheduled event');
  if (!row.cell) throw new DomainError('cell_unavailable', 'the event has no purchase cell');
  const seats = await dbOf(ctx).execute<{
    id: string;
    label: string;
    section: string;
    row: string;
    price: number;
    currency: string;
    tier: string;
  }>(sql`
    select s.id, s.label, s.section, s.row, t.price, t.currency, t.code as tier
    from seats s join price_tiers t on t.event_id = s.event_id and t.code = s.tier_code
    where s.event_id = ${eventId} order by s.label`);
  const tiers = await dbOf(ctx).execute<{
    code: string;
    name: string;
    price: number;
    currency: string;
    fee: number;
    fees_included: boolean;
  }>(sql`
    select t.code, t.name, t.price, t.currency, t.fee, t.fees_included from price_tiers t
    where t.event_id = ${eventId}
      and (exists (select 1 from seats s where s.event_id = t.event_id and s.tier_code = t.code)
           or exists (select 1 from ga_areas a where a.event_id = t.event_id and a.tier_code = t.code))
    order by t.code`);
  const gaAreas = await dbOf(ctx).execute<{ id: string; name: string; capacity: number; tier: string }>(sql`
    select id, name, capacity, tier_code as tier from ga_areas where event_id = ${eventId} order by name`);
  return {
    cell: { id: row.cell.id, baseUrl: row.cell.baseUrl },
    seatMapVersion: row.ev.seatMapVersion,
    body: {
      eventId,
      tenantId: row.ev.tenantId,
      name: row.ev.name,
      startsAt: row.ev.startsAt.toISOString(),
      holdTtlSeconds: row.on.holdTtlSeconds,
      maxSeatsPerOrder: row.on.perBuyerLimit,
      directoryEpoch: row.ev.directoryEpoch,
      seats: seats.rows.map((s) => ({
        id: s.id,
        label: s.label,
        section: s.section,
        row: s.row,
        price: Number(s.price),
        currency: s.currency,
        tier: s.tier,
      })),
      // The cell prices every order from these, fees included or added as the promoter set them.
      tiers: tiers.rows.map((t) => ({
        code: t.code,
        name: t.name,
        price: Number(t.price),
        currency: t.currency,
        fee: Number(t.fee),
        fees: t.fees_included ? ('included' as const) : ('added' as const),
      })),
      ...(gaAreas.rows.length
        ? { gaAreas: gaAreas.rows.map((a) => ({ id: a.id, name: a.name, capacity: Number(a.capacity), tier: a.tier })) }
        : {}),
    },
  };
}

/** Loads the event and its seats into its purchase cell (PUT /internal/events/{id}); idempotent on the cell's side. */
export async function loadEventIntoCell({
  ctx,
  eventId,
}: {
  ctx: Services;
  eventId: string;
}): Promise<EventLoadAnswer & { cellId: string; directoryEpoch: number; seatMapVersion: number }> {
  const { body, cell, seatMapVersion } = await buildEventLoad(ctx, eventId);
  const answer = await ctx.cells.loadEvent(cell, body);
  if (answer.seats !== body.seats.length)
    throw new CellCallError(`cell reports ${answer.seats} seats, sent ${body.seats.length}`, 200, answer);
  return { ...answer, cellId: cell.id, directoryEpoch: body.directoryEpoch, seatMapVersion };
}

const LEASE_MS = 60_000;
const backoff = (ctx: Services, attempts: number) =>
  Math.min(ctx.config.LOAD_RETRY_MAX_MS, ctx.config.LOAD_RETRY_BASE_MS * 2 ** Math.max(0, attempts - 1));

/**
 * One load attempt, claimed with a lease so two schedulers never load the same event at once.
 * The outcome is recorded on the onsale: loaded (ready), or failed with the error, the attempt
 * count and the time of the next retry (exponential backoff), or, after LOAD_MAX_ATTEMPTS
 * failures in a row, gave_up: the scheduler stops and the console shows the last error until an
 * operator retries (`force`) or the promoter schedules again. Never silent, never forever.
 */
export async function attemptLoad({
  ctx,
  eventId,
  force = false,
}: {
  ctx: Services;
  eventId: string;
  force?: boolean;
}) {
  const now = ctx.clock.now();
  const [claimed] = await dbOf(ctx)
    .update(onsales)
    .set({ loadStatus: 'loading', loadLeaseUntil: new Date(now.getTime() + LEASE_MS), lastLoadAt: now })
    .where(
      and(
        eq(onsales.eventId, eventId),
        or(
          force
            ? inArray(onsales.loadStatus, ['pending', 'failed', 'gave_up'])
            : and(inArray(onsales.loadStatus, ['pending', 'failed']), lte(onsales.nextLoadAt, now)),
          and(eq(onsales.loadStatus, 'loading'), lte(onsales.loadLeaseUntil, now)),
        ),
      ),
    )
    .returning();
  if (!claimed) return null;
  const attempts = claimed.loadAttempts + 1;
  try {
    const r = await loadEventIntoCell({ ctx, eventId });
    const [row] = await dbOf(ctx)
      .update(onsales)
      .set({
        loadStatus: 'loaded',
        loadAttempts: attempts,
        lastLoadError: null,
        loadedAt: ctx.clock.now(),
        loadLeaseUntil: null,
        loadedCellId: r.cellId,
        loadedEpoch: r.directoryEpoch,
        loadedSeatMapVersion: r.seatMapVersion,
      })
      .where(and(eq(onsales.eventId, eventId), eq(onsales.loadStatus, 'loading')))
      .returning();
    ctx.log.info('event loaded into cell', { eventId, cellId: r.cellId, seats: r.seats, created: r.created, attempts });
    return row ?? null;
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    const next = new Date(ctx.clock.now().getTime() + backoff(ctx, attempts));
    const gaveUp = attempts >= ctx.config.LOAD_MAX_ATTEMPTS;
    const [row] = await dbOf(ctx)
      .update(onsales)
      .set({
        loadStatus: gaveUp ? 'gave_up' : 'failed',
        loadAttempts: attempts,
        lastLoadError: message.slice(0, 1000),
        nextLoadAt: next,
        loadLeaseUntil: null,
      })
      .where(and(eq(onsales.eventId, eventId), eq(onsales.loadStatus, 'loading')))
      .returning();
    if (gaveUp) ctx.log.error('event load gave up; an operator must retry it', { eventId, attempts, error: message });
    else
      ctx.log.warn('event load failed; will retry', {
        eventId,
        attempts,
        nextAttemptAt: next.toISOString(),
        error: message,
      });
    return row ?? null;
  }
}
