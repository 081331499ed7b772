import { createHash, randomUUID } from 'node:crypto';
import type { GaQuantity, HoldResponse, SaleContext } from '@onsale/contracts';
import { sql } from 'drizzle-orm';
import type { CellContext } from '../context';
import type { Tx } from '../db/client';
import { holdGaUnits, holdSeats, holds, orders } from '../db/schema';
import { uuids } from '../db/sql';
import { withWriteTx } from '../db/tx';
import { DomainError } from '../errors';
import { MOVING } from '../inventory/freeze';
import { appendEvent, type Causation } from '../outbox/append';
import { expireOrders } from './expire';
import { type GaLine, type GaTaken, priceGaAreas, takeGaUnits, unitsByArea } from './ga-units';
import { claimIdempotencyKey, storeIdempotentResponse } from './idempotency';
import { seatPrice } from './seat-price';

export interface PlaceHoldInput {
  eventId: string;
  userId: string;
  idempotencyKey: string;
  seatIds: string[];
  /** General-admission places by area; absent for a seats-only hold. */
  ga?: GaQuantity[];
  correlationId: string;
}

export interface PlaceHoldResult {
  body: HoldResponse;
  replayed: boolean;
}

type SaleRules = { tenant_id: string; hold_ttl_seconds: number; max_seats_per_order: number };
type PricedSeat = { id: string; section: string; tier: string | null; price: number; currency: string };

/**
 * The hold: one transaction takes every requested seat and general-admission place or none.
 * Seat rows are locked in id order (so two overlapping requests queue instead of deadlocking),
 * holds that expired on those seats are reclaimed under the same locks, and the partial unique
 * index on hold_seats is the last guard should anything here be wrong. GA places come last, from
 * the area's stripes (ga-units.ts), so a stripe's lock is held for the shortest time. No network
 * call happens inside; the HoldCreated event leaves through the outbox.
 */
export async function placeHold(ctx: CellContext, input: PlaceHoldInput): Promise<PlaceHoldResult> {
  const seatIds = [...input.seatIds].sort();
  const ga = [...(input.ga ?? [])].sort((a, b) => (a.areaId < b.areaId ? -1 : 1));
  const places = seatIds.length + ga.reduce((n, g) => n + g.quantity, 0);
  // A seats-only request hashes as it always did, so keys stored before GA existed still replay.
  const requestHash = createHash('sha256')
    .update(JSON.stringify(ga.length ? [input.eventId, seatIds, ga] : [input.eventId, seatIds]))
    .digest('hex');
  const cause = { cellId: ctx.cellId, correlationId: input.correlationId, causationId: null };

  return withWriteTx(ctx, async (tx) => {
    const prior = await claimIdempotencyKey(tx, input.userId, input.idempotencyKey, requestHash);
    if (prior) return { body: prior as HoldResponse, replayed: true };
    const rules = await saleRules(tx, input.eventId, places);
    const seats = await lockSeats(tx, input.eventId, seatIds);
    const gaLines = await priceGaAreas(tx, input.eventId, ga);
    if (new Set([...seats, ...gaLines].map((x) => x.currency)).size !== 1)
      throw new DomainError('bad_request', 'the places asked for are priced in different currencies');
    await enforceBuyerLimit(tx, input, rules.max_seats_per_order, places);
    await refuseOccupied(tx, cause, seatIds);
    const gaTaken = await takeGaUnits(tx, cause, gaLines);
    const body = await insertHold(tx, cause, input, rules, { seats, gaLines, gaTaken });
    await storeIdempotentResponse(tx, input.userId, input.idempotencyKey, body);
    return { body, replayed: false };
  });
}

/**
 * The event's hold rules, read under FOR SHARE of the event row before any seat is locked: the
 * evacuation's freeze updates that row, so a hold racing it either commits before the freeze
 * returns or sees `moving` here (inventory/freeze.ts). A moving, paused or cancelled sale, or more
 * places than an order may have, is refused.
 */
async function saleRules(tx: Tx, eventId: string, places: number): Promise<SaleRules> {
  const ev = await tx.execute<SaleRules & { sales_status: string; sales_status_reason: string | null }>(sql`
    SELECT tenant_id, hold_ttl_seconds, max_seats_per_order, sales_status, sales_status_reason
      FROM events WHERE id = ${eventId} FOR SHARE`);
  const rules = ev.rows[0];
  if (!rules) throw new DomainError('not_found', 'event not found in this cell', { eventId });
  if (rules.sales_status === MOVING)
    throw new DomainError('event_moving', 'this event is moving to another cell; retry shortly', { eventId });
  const reason = rules.sales_status_reason;
  if (rules.sales_status === 'paused')
    throw new DomainError(
      'onsale_paused',
      `the onsale is paused${reason ? `: ${reason}` : ''}; try again when it resumes`,
      { eventId, reason },
    );
  if (rules.sales_status === 'canceled')
    throw new DomainError('event_canceled', `the event is cancelled${reason ? `: ${reason}` : ''}`, {
      eventId,
      reason,
    });
  const max = rules.max_seats_per_order;
  if (places > max) {
    throw new DomainError('validation_failed', `at most ${max} seats per order`, {
      issues: [{ path: 'seatIds', message: `at most ${max} seats` }],
    });
  }
  return rules;
}

/** Locks the requested seats of the event, in id order, with their prices. */
async function lockSeats(tx: Tx, eventId: string, seatIds: string[]): Promise<PricedSeat[]> {
  if (seatIds.length === 0) return [];
  const locked = await tx.execute<PricedSeat>(sql`
    SELECT s.id, s.section, s.tier, ${seatPrice} AS price, trim(coalesce(t.currency, s.currency)) AS currency
      FROM seats s LEFT JOIN price_tiers t ON t.event_id = s.event_id AND t.code = s.tier
     WHERE s.event_id = ${eventId} AND s.id = ANY(${uuids(seatIds)})
     ORDER BY s.id FOR UPDATE OF s`);
  if (locked.rows.length !== seatIds.length) {
    const found = new Set(locked.rows.map((s) => s.id));
    throw new DomainError('seats_not_found', 'seats not found in this event', {
      seatIds: seatIds.filter((id) => !found.has(id)),
    });
  }
  return locked.rows;
}

/**
 * The per-buyer limit counts every seat of the buyer's live holds and paid orders for the event,
 * not only this request's. The buyer's row (event, user) is locked after the seats (so the event
 * is known to exist) and before anything is written: the same buyer's concurrent holds queue
 * here and each counts what the one before it committed (read committed: the count's snapshot
 * is taken after the lock is granted). Different buyers never wait on each other's row.
 */
async function enforceBuyerLimit(tx: Tx, input: PlaceHoldInput, limit: number, requested: number): Promise<void> {
  await tx.execute(sql`
    INSERT INTO buyer_limits (event_id, user_id) VALUES (${input.eventId}, ${input.userId})
    ON CONFLICT (event_id, user_id) DO UPDATE SET event_id = excluded.event_id`);
  // Seats and general-admission places count alike.
  const counted = await tx.execute<{ seats: number }>(sql`
    SELECT coalesce(sum((SELECT count(*) FROM hold_seats hs WHERE hs.hold_id = h.id)
                      + (SELECT coalesce(sum(g.quantity), 0) FROM hold_ga_units g WHERE g.hold_id = h.id)), 0)::int AS seats
      FROM orders o JOIN holds h ON h.order_id = o.id
     WHERE o.event_id = ${input.eventId} AND o.user_id = ${input.userId}
       AND ((o.status = 'pending_payment' AND h.status = 'active' AND h.expires_at > now())
            OR o.status IN ('confirmed', 'paid', 'ticketed'))`);
  const held = counted.rows[0]?.seats ?? 0;
  if (held + requested > limit) {
    throw new DomainError(
      'buyer_limit_exceeded',
      `the limit is ${limit} seats per buyer for this event; you already hold or bought ${held}, this request asks for ${requested}`,
      { limit, held, requested, remaining: Math.max(0, limit - held) },
    );
  }
}

/**
 * With the seats locked: holds on them that have lapsed are expired now (the seats come
 * back), and a seat still held or ticketed refuses the whole request, naming the seats.
 */
async function refuseOccupied(tx: Tx, cause: Causation, seatIds: string[]): Promise<void> {
  if (seatIds.length === 0) return;
  const occupied = await tx.execute<{ seat_id: string; order_id: string | null; lapsed: boolean }>(sql`
    SELECT hs.seat_id, h.order_id, (h.status = 'active' AND h.expires_at <= now()) AS lapsed
      FROM hold_seats hs JOIN holds h ON h.id = hs.hold_id
     WHERE hs.seat_id = ANY(${uuids(seatIds)}) AND hs.released_at IS NULL
    UNION ALL
    SELECT seat_id, NULL, false FROM tickets WHERE seat_id = ANY(${uuids(seatIds)}) AND voided_at IS NULL`);
  const lapsed = occupied.rows.filter((r) => r.lapsed).map((r) => r.order_id!);
  await expireOrders(tx, cause, [...new Set(lapsed)]);
  const taken = occupied.rows.filter((r) => !r.lapsed).map((r) => r.seat_id);
  if (taken.length > 0) {
    throw new DomainError('seats_unavailable', 'some seats are no longer available', {
      seatIds: [...new Set(taken)].sort(),
    });
  }
}

async function insertHold(
  tx: Tx,
  cause: Causation,
  input: PlaceHoldInput,
  rules: SaleRules,
  taken: { seats: PricedSeat[]; gaLines: GaLine[]; gaTaken: GaTaken[] },
): Promise<HoldResponse> {
  const orderId = randomUUID();
  const holdId = randomUUID();
  const { seats, gaLines, gaTaken } = taken;
  const amount = seats.reduce((sum, s) => sum + s.price, 0) + gaLines.reduce((sum, g) => sum + g.price * g.quantity, 0);
  const currency = (seats[0] ?? gaLines[0])!.currency;
  const seatIds = seats.map((s) => s.id);
  await tx.insert(orders).values({
    id: orderId,
    eventId: input.eventId,
    userId: input.userId,
    status: 'pending_payment',
    amount,
    currency,
    correlationId: input.correlationId,
  });
  // The database clock decides expiry everywhere, so it also sets it.
  const [hold] = await tx
    .insert(holds)
    .values({
      id: holdId,
      orderId,
      eventId: input.eventId,
      userId: input.userId,
      status: 'active',
      expiresAt: sql`now() + make_interval(secs => ${rules.hold_ttl_seconds})`,
    })
    .returning({ expiresAt: holds.expiresAt });
  const expiresAt = hold!.expiresAt.toISOString();
  if (seatIds.length > 0) await tx.insert(holdSeats).values(seatIds.map((seatId) => ({ holdId, seatId })));
  const gaUnits = unitsByArea(gaTaken);
  if (gaTaken.length > 0) await tx.insert(holdGaUnits).values(perStripe(holdId, gaTaken));
  // The sale context of the v2 event is what was just priced and written: no need to read it back.
  const sale: SaleContext = {
    tenantId: rules.tenant_id,
    eventId: input.eventId,
    amount,
    currency,
    seats: seats.map((s) => ({ seatId: s.id, section: s.section, tier: s.tier, price: s.price })),
  };
  await appendEvent(
    tx,
    cause,
    'HoldCreated',
    orderId,
    {
      orderId,
      holdId,
      eventId: input.eventId,
      userId: input.userId,
      seatIds,
      ...(gaUnits.length ? { gaUnits } : {}),
      amount,
      currency,
      expiresAt,
    },
    sale,
  );
  return { orderId, holdId, status: 'pending_payment', expiresAt };
}

/** One row per stripe a hold took from (a stripe refilled mid-hold may have been picked twice). */
function perStripe(holdId: string, taken: GaTaken[]) {
  const rows = new Map<string, { holdId: string; areaId: string; stripe: number; quantity: number }>();
  for (const t of taken) {
    const key = `${t.areaId}:${t.stripe}`;
    const row = rows.get(key) ?? { holdId, areaId: t.areaId, stripe: t.stripe, quantity: 0 };
    row.quantity += t.quantity;
    rows.set(key, row);
  }
  return [...rows.values()];
}
