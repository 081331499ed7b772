import { createHash, randomUUID } from 'node:crypto';
import type { HoldResponse } from '@onsale/contracts';
import { sql } from 'drizzle-orm';
import type { CellContext } from '../context';
import type { Tx } from '../db/client';
import { holdSeats, holds, orders } from '../db/schema';
import { uuids } from '../db/sql';
import { withWriteTx } from '../db/tx';
import { DomainError } from '../errors';
import { refuseIfFrozen } from '../inventory/freeze';
import { appendEvent, type Causation } from '../outbox/append';
import { expireOrders } from './expire';
import { claimIdempotencyKey, storeIdempotentResponse } from './idempotency';
import { seatPrice } from './seat-price';

export interface PlaceHoldInput {
  eventId: string;
  userId: string;
  idempotencyKey: string;
  seatIds: string[];
  correlationId: string;
}

export interface PlaceHoldResult {
  body: HoldResponse;
  replayed: boolean;
}

type LockedSeat = {
  id: string;
  price: number;
  currency: string;
  hold_ttl_seconds: number;
  max_seats_per_order: number;
  sales_status: string;
  sales_status_reason: string | null;
};

/**
 * The hold: one transaction takes every requested seat or none. Seat rows are locked in id
 * order (so two overlapping requests queue instead of deadlocking), holds that expired on
 * those seats are reclaimed under the same locks, and the partial unique index on
 * hold_seats is the last guard should anything here be wrong. No network call happens
 * inside; the HoldCreated event leaves through the outbox.
 */
export async function placeHold(ctx: CellContext, input: PlaceHoldInput): Promise<PlaceHoldResult> {
  const seatIds = [...input.seatIds].sort();
  const requestHash = createHash('sha256')
    .update(JSON.stringify([input.eventId, seatIds]))
    .digest('hex');
  const cause = { cellId: ctx.cellId, correlationId: input.correlationId, causationId: null };

  return withWriteTx(ctx, async (tx) => {
    const prior = await claimIdempotencyKey(tx, input.userId, input.idempotencyKey, requestHash);
    if (prior) return { body: prior as HoldResponse, replayed: true };
    await refuseIfFrozen(tx, input.eventId);
    const seats = await lockSeats(tx, input.eventId, seatIds);
    await enforceBuyerLimit(tx, input, seats[0]!.max_seats_per_order, seatIds.length);
    await refuseOccupied(tx, cause, seatIds);
    const body = await insertHold(tx, cause, input, seats);
    await storeIdempotentResponse(tx, input.userId, input.idempotencyKey, body);
    return { body, replayed: false };
  });
}

/** Locks the requested seats of the event, in id order, with the event's rules and prices alongside. */
async function lockSeats(tx: Tx, eventId: string, seatIds: string[]): Promise<LockedSeat[]> {
  const locked = await tx.execute<LockedSeat>(sql`
    SELECT s.id, ${seatPrice} AS price, coalesce(t.currency, s.currency) AS currency,
           e.hold_ttl_seconds, e.max_seats_per_order, e.sales_status, e.sales_status_reason
      FROM seats s JOIN events e ON e.id = s.event_id
      LEFT JOIN price_tiers t ON t.event_id = s.event_id AND t.code = s.tier
     WHERE s.event_id = ${eventId} AND s.id = ANY(${uuids(seatIds)})
     ORDER BY s.id FOR UPDATE OF s`);
  if (locked.rows.length !== seatIds.length) {
    if (
      locked.rows.length === 0 &&
      (await tx.execute(sql`SELECT 1 FROM events WHERE id = ${eventId}`)).rows.length === 0
    ) {
      throw new DomainError('not_found', 'event not found in this cell', { eventId });
    }
    const found = new Set(locked.rows.map((s) => s.id));
    throw new DomainError('seats_not_found', 'seats not found in this event', {
      seatIds: seatIds.filter((id) => !found.has(id)),
    });
  }
  const { sales_status: sales, sales_status_reason: reason } = locked.rows[0]!;
  if (sales === 'paused')
    throw new DomainError(
      'onsale_paused',
      `the onsale is paused${reason ? `: ${reason}` : ''}; try again when it resumes`,
      {
        eventId,
        reason,
      },
    );
  if (sales === 'canceled')
    throw new DomainError('event_canceled', `the event is cancelled${reason ? `: ${reason}` : ''}`, {
      eventId,
      reason,
    });
  const max = locked.rows[0]!.max_seats_per_order;
  if (seatIds.length > max) {
    throw new DomainError('validation_failed', `at most ${max} seats per order`, {
      issues: [{ path: 'seatIds', message: `at most ${max} seats` }],
    });
  }
  if (new Set(locked.rows.map((s) => s.currency)).size !== 1) {
    throw new DomainError('bad_request', 'seats are priced in different currencies');
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
  const counted = await tx.execute<{ seats: number }>(sql`
    SELECT count(*)::int AS seats
      FROM orders o JOIN holds h ON h.order_id = o.id JOIN hold_seats hs ON hs.hold_id = h.id
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
  const occupied = await tx.execute<{ seat_id: string; order_id: string | null; lapsed: boolean }>(sql`
    SELECT hs.seat_id, h.order_id, (h.status = 'active' AND h.expires_at <= now()) AS lapsed
      FROM hold_seats hs JOIN holds h ON h.id = hs.hold_id
     WHERE hs.seat_id = ANY(${uuids(seatIds)}) AND hs.released_at IS NULL
    UNION ALL
    SELECT seat_id, NULL, false FROM tickets WHERE seat_id = ANY(${uuids(seatIds)})`);
  const lapsed = occupied.rows.filter((r) => r.lapsed).map((r) => r.order_id!);
  await expireOrders(tx, cause, [...new Set(lapsed)]);
  const taken = occupied.rows.filter((r) => !r.lapsed).map((r) => r.seat_id);
  if (taken.length > 0) {
    throw new DomainError('seats_unavailable', 'some seats are no longer available', {
      seatIds: [...new Set(taken)].sort(),
    });
  }
}

async function insertHold(tx: Tx, cause: Causation, input: PlaceHoldInput, seats: LockedSeat[]): Promise<HoldResponse> {
  const orderId = randomUUID();
  const holdId = randomUUID();
  const amount = seats.reduce((sum, s) => sum + s.price, 0);
  const currency = seats[0]!.currency;
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
      expiresAt: sql`now() + make_interval(secs => ${seats[0]!.hold_ttl_seconds})`,
    })
    .returning({ expiresAt: holds.expiresAt });
  const expiresAt = hold!.expiresAt.toISOString();
  await tx.insert(holdSeats).values(seatIds.map((seatId) => ({ holdId, seatId })));
  await appendEvent(tx, cause, 'HoldCreated', orderId, {
    orderId,
    holdId,
    eventId: input.eventId,
    userId: input.userId,
    seatIds,
    amount,
    currency,
    expiresAt,
  });
  return { orderId, holdId, status: 'pending_payment', expiresAt };
}
