import { createHash, randomUUID } from 'node:crypto';
import type { GaQuantity, HoldResponse, SaleContext } from '@onsale/contracts';
import { sql } from 'drizzle-orm';
import type { CellContext } from '../context';
import type { Tx } from '../db/client';
import { uuids } from '../db/sql';
import { withWriteTx } from '../db/tx';
import { DomainError } from '../errors';
import { MOVING } from '../inventory/freeze';
import { type Causation, outboxEnvelope, outboxInsert } from '../outbox/append';
import { expireOrders } from './expire';
import { type GaLine, type GaTaken, priceGaAreas, takeGaUnits, unitsByArea } from './ga-units';
import { claimKey, priorResponse, storeResponse } from './idempotency';
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

type SaleRules = { tenant_id: string; hold_ttl_seconds: number; max_seats_per_order: number; expires_at: string };
/** What openHold reads: the claim, and the event's row (all null when the event is not in this cell). */
type Opening = {
  claimed: boolean;
  id: string | null;
  sales_status: string | null;
  sales_status_reason: string | null;
} & {
  [K in keyof SaleRules]: SaleRules[K] | null;
};
type Occupant = { seat_id: string; order_id: string | null; lapsed: boolean };
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
    const opening = await openHold(tx, input, requestHash);
    if (!opening.claimed) {
      const prior = await priorResponse(tx, input.userId, input.idempotencyKey, requestHash);
      return { body: prior as HoldResponse, replayed: true };
    }
    const rules = saleRules(opening, input.eventId, places);
    const seats = await lockSeats(tx, input.eventId, seatIds);
    const gaLines = await priceGaAreas(tx, input.eventId, ga);
    if (new Set([...seats, ...gaLines].map((x) => x.currency)).size !== 1)
      throw new DomainError('bad_request', 'the places asked for are priced in different currencies');
    const { held, occupied } = await readStanding(tx, input, seatIds);
    enforceBuyerLimit(rules.max_seats_per_order, held, places);
    await refuseOccupied(tx, cause, occupied);
    const gaTaken = await takeGaUnits(tx, cause, gaLines);
    const body = await writeHold(tx, cause, input, rules, { seats, gaLines, gaTaken });
    return { body, replayed: false };
  });
}

/**
 * The hold's first statement: claims the idempotency key, reads the event's hold rules under FOR
 * SHARE of the event row, and locks the buyer's row for the event (upserted; absent for an event
 * that is not here). The evacuation's freeze updates the event row, so a hold racing it either
 * commits before the freeze returns or sees `moving` (inventory/freeze.ts). The buyer's row makes
 * the same buyer's concurrent holds queue before any seat is locked: every hold takes the buyer's
 * row, then its seats, so the order is the same for all and none deadlocks; different buyers
 * never wait on each other's row. The expiry (ISO, to the millisecond) is now(), the transaction's
 * start, plus the TTL: the database clock decides expiry everywhere, and the hold row gets the same.
 */
async function openHold(tx: Tx, input: PlaceHoldInput, requestHash: string): Promise<Opening> {
  const opened = await tx.execute<Opening>(sql`
    WITH claim AS (${claimKey(input.userId, input.idempotencyKey, requestHash)}),
    event AS (
      SELECT id, tenant_id, hold_ttl_seconds, max_seats_per_order, sales_status, sales_status_reason,
             to_char((now() + make_interval(secs => hold_ttl_seconds)) AT TIME ZONE 'UTC',
                     'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS expires_at
        FROM events WHERE id = ${input.eventId} FOR SHARE
    ), buyer AS (
      INSERT INTO buyer_limits (event_id, user_id) SELECT id, ${input.userId} FROM event
      ON CONFLICT (event_id, user_id) DO UPDATE SET event_id = excluded.event_id
    )
    SELECT EXISTS (SELECT FROM claim) AS claimed, event.* FROM (VALUES (1)) AS one LEFT JOIN event ON true`);
  return opened.rows[0]!;
}

/** A moving, paused or cancelled sale, or more places than an order may have, is refused. */
function saleRules(opening: Opening, eventId: string, places: number): SaleRules {
  const { id, sales_status: status, sales_status_reason: reason } = opening;
  if (id === null) throw new DomainError('not_found', 'event not found in this cell', { eventId });
  if (status === MOVING)
    throw new DomainError('event_moving', 'this event is moving to another cell; retry shortly', { eventId });
  if (status === 'paused')
    throw new DomainError(
      'onsale_paused',
      `the onsale is paused${reason ? `: ${reason}` : ''}; try again when it resumes`,
      { eventId, reason },
    );
  if (status === 'canceled')
    throw new DomainError('event_canceled', `the event is cancelled${reason ? `: ${reason}` : ''}`, {
      eventId,
      reason,
    });
  const rules = opening as SaleRules;
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
 * With the buyer's row and the seats locked, one statement reads what stands in the way: the
 * places the buyer already holds or bought for the event (seats and general admission count
 * alike), and the requested seats still on a hold (lapsed or not) or a ticket. Read committed
 * takes this statement's snapshot after both locks were granted, so it sees every hold
 * committed before them.
 */
async function readStanding(
  tx: Tx,
  input: PlaceHoldInput,
  seatIds: string[],
): Promise<{ held: number; occupied: Occupant[] }> {
  const standing = await tx.execute<{ held: number; occupied: Occupant[] }>(sql`
    SELECT (SELECT coalesce(sum((SELECT count(*) FROM hold_seats hs WHERE hs.hold_id = h.id)
                              + (SELECT coalesce(sum(g.quantity), 0) FROM hold_ga_units g WHERE g.hold_id = h.id)), 0)::int
              FROM orders o JOIN holds h ON h.order_id = o.id
             WHERE o.event_id = ${input.eventId} AND o.user_id = ${input.userId}
               AND ((o.status = 'pending_payment' AND h.status = 'active' AND h.expires_at > now())
                    OR o.status IN ('confirmed', 'paid', 'ticketed'))) AS held,
           (SELECT coalesce(json_agg(x), '[]') FROM (
              SELECT hs.seat_id, h.order_id, (h.status = 'active' AND h.expires_at <= now()) AS lapsed
                FROM hold_seats hs JOIN holds h ON h.id = hs.hold_id
               WHERE hs.seat_id = ANY(${uuids(seatIds)}) AND hs.released_at IS NULL
              UNION ALL
              SELECT seat_id, NULL, false FROM tickets WHERE seat_id = ANY(${uuids(seatIds)}) AND voided_at IS NULL
           ) x) AS occupied`);
  return standing.rows[0]!;
}

/** The per-buyer limit counts every place of the buyer's live holds and paid orders for the event, not only this request's. */
function enforceBuyerLimit(limit: number, held: number, requested: number): void {
  if (held + requested > limit) {
    throw new DomainError(
      'buyer_limit_exceeded',
      `the limit is ${limit} seats per buyer for this event; you already hold or bought ${held}, this request asks for ${requested}`,
      { limit, held, requested, remaining: Math.max(0, limit - held) },
    );
  }
}

/**
 * Holds on the requested seats that have lapsed are expired now (the seats come back), and a
 * seat still held or ticketed refuses the whole request, naming the seats.
 */
async function refuseOccupied(tx: Tx, cause: Causation, occupied: Occupant[]): Promise<void> {
  const lapsed = occupied.filter((r) => r.lapsed).map((r) => r.order_id!);
  await expireOrders(tx, cause, [...new Set(lapsed)]);
  const taken = occupied.filter((r) => !r.lapsed).map((r) => r.seat_id);
  if (taken.length > 0) {
    throw new DomainError('seats_unavailable', 'some seats are no longer available', {
      seatIds: [...new Set(taken)].sort(),
    });
  }
}

/**
 * Everything the hold writes, in one statement: the order, the hold, its seats and GA places,
 * the HoldCreated event in the outbox, and the response stored under the idempotency key. The
 * v2 event's sale context is what was just priced, not read back.
 */
async function writeHold(
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
  const expiresAt = rules.expires_at;
  const gaUnits = unitsByArea(gaTaken);
  const stripes = perStripe(gaTaken);
  const sale: SaleContext = {
    tenantId: rules.tenant_id,
    eventId: input.eventId,
    amount,
    currency,
    seats: seats.map((s) => ({ seatId: s.id, section: s.section, tier: s.tier, price: s.price })),
  };
  const { eventId, userId } = input;
  const created = await outboxEnvelope(
    tx,
    cause,
    'HoldCreated',
    orderId,
    { orderId, holdId, eventId, userId, seatIds, ...(gaUnits.length ? { gaUnits } : {}), amount, currency, expiresAt },
    sale,
  );
  const body: HoldResponse = { orderId, holdId, status: 'pending_payment', expiresAt };
  await tx.execute(sql`
    WITH o AS (
      INSERT INTO orders (id, event_id, user_id, status, amount, currency, correlation_id)
      VALUES (${orderId}, ${eventId}, ${userId}, 'pending_payment', ${amount}, ${currency}, ${input.correlationId})
    ), h AS (
      INSERT INTO holds (id, order_id, event_id, user_id, status, expires_at)
      VALUES (${holdId}, ${orderId}, ${eventId}, ${userId}, 'active', now() + make_interval(secs => ${rules.hold_ttl_seconds}))
    ), hs AS (
      INSERT INTO hold_seats (hold_id, seat_id) SELECT ${holdId}::uuid, unnest(${uuids(seatIds)})
    ), hg AS (
      INSERT INTO hold_ga_units (hold_id, area_id, stripe, quantity)
      SELECT ${holdId}::uuid, * FROM unnest(${uuids(stripes.map((s) => s.areaId))}, ${sql.param(stripes.map((s) => s.stripe))}::int[],
                                      ${sql.param(stripes.map((s) => s.quantity))}::int[])
    ), ob AS (${outboxInsert(cause.cellId, created)})
    ${storeResponse(userId, input.idempotencyKey, body)}`);
  return body;
}

/** One row per stripe a hold took from (a stripe refilled mid-hold may have been picked twice). */
function perStripe(taken: GaTaken[]): GaTaken[] {
  const rows = new Map<string, GaTaken>();
  for (const t of taken) {
    const key = `${t.areaId}:${t.stripe}`;
    const row = rows.get(key) ?? { areaId: t.areaId, stripe: t.stripe, quantity: 0 };
    row.quantity += t.quantity;
    rows.set(key, row);
  }
  return [...rows.values()];
}
