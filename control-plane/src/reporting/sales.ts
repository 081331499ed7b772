import { DomainError } from '@onsale/contracts';
import {
  type Bucket,
  migrateReporting,
  paidOrders,
  salesByEvent,
  salesBySection,
  salesSummary,
  salesTimeline,
  seatStates,
  settlementCsv,
  settlementRows,
} from '@onsale/reporting';
import { and, eq, inArray, sql, sum } from 'drizzle-orm';
import type pg from 'pg';
import type { Services } from '../context';
import { events, gaAreas, seats } from '../db/schema';
import { dbOf } from '../db/tx';
import { eventForTenant } from '../events/events';
import type { PromoterActor } from '../lib/actors';

const ready = new WeakMap<pg.Pool, Promise<void>>();
/** The projections' tables exist before the first read, even before the consumer first ran. */
function ensureSchema(pool: pg.Pool): Promise<void> {
  let p = ready.get(pool);
  if (!p) {
    p = migrateReporting(pool);
    ready.set(pool, p);
  }
  return p;
}

/** Every sales read starts here: another tenant's event does not exist (404). */
async function scoped(ctx: Services, actor: PromoterActor, eventId: string) {
  const ev = await eventForTenant(dbOf(ctx), actor.tenantId, eventId);
  await ensureSchema(ctx.pool);
  return ev;
}

export async function getSalesSummary({
  ctx,
  actor,
  eventId,
}: {
  ctx: Services;
  actor: PromoterActor;
  eventId: string;
}) {
  const ev = await scoped(ctx, actor, eventId);
  return { eventId: ev.id, ...(await salesSummary(ctx.pool, actor.tenantId, ev.id)) };
}

export async function getSalesTimeline({
  ctx,
  actor,
  eventId,
  bucket,
  from,
  to,
}: {
  ctx: Services;
  actor: PromoterActor;
  eventId: string;
  bucket: Bucket;
  from?: Date;
  to?: Date;
}) {
  // The range is from (inclusive) to to (exclusive): one that ends where it starts, or before, holds nothing.
  if (from && to && to.getTime() <= from.getTime())
    throw new DomainError('validation_failed', 'the timeline range is not valid', {
      issues: [{ path: 'to', message: 'must be after from' }],
    });
  const ev = await scoped(ctx, actor, eventId);
  return { eventId: ev.id, bucket, points: await salesTimeline(ctx.pool, actor.tenantId, ev.id, bucket, { from, to }) };
}

export async function getSalesBySection({
  ctx,
  actor,
  eventId,
}: {
  ctx: Services;
  actor: PromoterActor;
  eventId: string;
}) {
  const ev = await scoped(ctx, actor, eventId);
  // Each GA area is a section of its own, named by the area: reporting counts its places under that name.
  const [seated, areas] = await Promise.all([
    dbOf(ctx)
      .select({ section: seats.section, tier: seats.tierCode, seats: sql<number>`count(*)::int` })
      .from(seats)
      .where(eq(seats.eventId, ev.id))
      .groupBy(seats.section, seats.tierCode),
    dbOf(ctx)
      .select({ section: gaAreas.name, tier: gaAreas.tierCode, seats: gaAreas.capacity })
      .from(gaAreas)
      .where(eq(gaAreas.eventId, ev.id)),
  ]);
  const capacity = [...seated, ...areas];
  return { eventId: ev.id, sections: await salesBySection(ctx.pool, actor.tenantId, ev.id, capacity) };
}

export async function getSettlementCsv({
  ctx,
  actor,
  eventId,
}: {
  ctx: Services;
  actor: PromoterActor;
  eventId: string;
}) {
  const ev = await scoped(ctx, actor, eventId);
  return settlementCsv(await settlementRows(ctx.pool, actor.tenantId, ev.id));
}

/** The event's orders that took money, newest payment first: one by its id, or the newest `limit`. */
export async function getPaidOrders({
  ctx,
  actor,
  eventId,
  orderId,
  limit,
}: {
  ctx: Services;
  actor: PromoterActor;
  eventId: string;
  orderId?: string;
  limit: number;
}) {
  const ev = await scoped(ctx, actor, eventId);
  return paidOrders(ctx.pool, actor.tenantId, ev.id, { orderId, limit });
}

/**
 * Places sold and held per event of the actor's tenant among `eventIds` (a page of its events; an event with no sale
 * yet is absent), and the places each event has: its seats and its GA areas' capacity.
 */
export async function getSalesByEvent({
  ctx,
  actor,
  eventIds,
}: {
  ctx: Services;
  actor: PromoterActor;
  eventIds: string[];
}) {
  await ensureSchema(ctx.pool);
  const [sales, places] = await Promise.all([
    salesByEvent(ctx.pool, actor.tenantId, eventIds),
    dbOf(ctx)
      .select({ eventId: events.id, seats: events.seatCount, ga: sum(gaAreas.capacity).mapWith(Number) })
      .from(events)
      .leftJoin(gaAreas, eq(gaAreas.eventId, events.id))
      .where(and(eq(events.tenantId, actor.tenantId), inArray(events.id, eventIds)))
      .groupBy(events.id, events.seatCount),
  ]);
  return { sales, places: new Map(places.map((p) => [p.eventId, p.seats + (p.ga ?? 0)])) };
}

/** The seat ids held and sold now, for the live seat map. */
export async function getSeatStates({ ctx, actor, eventId }: { ctx: Services; actor: PromoterActor; eventId: string }) {
  const ev = await scoped(ctx, actor, eventId);
  return seatStates(ctx.pool, actor.tenantId, ev.id);
}
