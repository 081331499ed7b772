import { createHash, randomUUID } from 'node:crypto';
import type { HoldResponse } from '@onsale/contracts';
import { sql } from 'drizzle-orm';
import type { CellContext } from '../context';
import { holdSeats, holds, orders } from '../db/schema';
import { uuids } from '../db/sql';
import { withWriteTx } from '../db/tx';
import { DomainError } from '../errors';
import { appendEvent } from '../outbox/append';
import { expireOrders } from './expire';
import { claimIdempotencyKey, storeIdempotentResponse } from './idempotency';

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

    const event = await tx.execute<{ hold_ttl_seconds: number; max_seats_per_order: number }>(
      sql`SELECT hold_ttl_seconds, max_seats_per_order FROM events WHERE id = ${input.eventId}`,
    );
    const rules = event.rows[0];
    if (!rules) throw new DomainError('not_found', 'event not found in this cell', { eventId: input.eventId });
    if (seatIds.length > rules.max_seats_per_order) {
      throw new DomainError('validation_failed', `at most ${rules.max_seats_per_order} seats per order`, {
        issues: [{ path: 'seatIds', message: `at most ${rules.max_seats_per_order} seats` }],
      });
    }

    const locked = await tx.execute<{ id: string; price: number; currency: string }>(sql`
      SELECT id, price, currency FROM seats
       WHERE event_id = ${input.eventId} AND id = ANY(${uuids(seatIds)})
       ORDER BY id FOR UPDATE`);
    if (locked.rows.length !== seatIds.length) {
      const found = new Set(locked.rows.map((s) => s.id));
      throw new DomainError('seats_not_found', 'seats not found in this event', {
        seatIds: seatIds.filter((id) => !found.has(id)),
      });
    }

    const lapsed = await tx.execute<{ order_id: string }>(sql`
      SELECT DISTINCT h.order_id FROM hold_seats hs JOIN holds h ON h.id = hs.hold_id
       WHERE hs.seat_id = ANY(${uuids(seatIds)}) AND hs.released_at IS NULL
         AND h.status = 'active' AND h.expires_at <= now()`);
    await expireOrders(
      tx,
      cause,
      lapsed.rows.map((r) => r.order_id),
    );

    const taken = await tx.execute<{ seat_id: string }>(sql`
      SELECT seat_id FROM hold_seats WHERE seat_id = ANY(${uuids(seatIds)}) AND released_at IS NULL
      UNION SELECT seat_id FROM tickets WHERE seat_id = ANY(${uuids(seatIds)})`);
    if (taken.rows.length > 0) {
      throw new DomainError('seats_unavailable', 'some seats are no longer available', {
        seatIds: taken.rows.map((r) => r.seat_id).sort(),
      });
    }

    const currencies = new Set(locked.rows.map((s) => s.currency));
    if (currencies.size !== 1) throw new DomainError('bad_request', 'seats are priced in different currencies');
    const amount = locked.rows.reduce((sum, s) => sum + s.price, 0);
    const currency = locked.rows[0]!.currency;
    const orderId = randomUUID();
    const holdId = randomUUID();

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
    const expiresAt = hold!.expiresAt;
    await tx.insert(holdSeats).values(seatIds.map((seatId) => ({ holdId, seatId })));
    await appendEvent(tx, cause, 'HoldCreated', orderId, {
      orderId,
      holdId,
      eventId: input.eventId,
      userId: input.userId,
      seatIds,
      amount,
      currency,
      expiresAt: expiresAt.toISOString(),
    });

    const body: HoldResponse = { orderId, holdId, status: 'pending_payment', expiresAt: expiresAt.toISOString() };
    await storeIdempotentResponse(tx, input.userId, input.idempotencyKey, body);
    return { body, replayed: false };
  });
}
