import { randomUUID } from 'node:crypto';
import { type GaQuantity, type HoldResponse, requestHash, type SaleContext } from '@onsale/contracts';
import { sql } from 'drizzle-orm';
import type { CellContext } from '../context';
import { committing } from '../db/batched-tx';
import type { Tx } from '../db/client';
import { uuids } from '../db/sql';
import { withWriteTx } from '../db/tx';
import { DomainError, seatsUnavailable } from '../errors';
import { MOVING } from '../inventory/freeze';
import { type Causation, outboxEnvelope, outboxInsert } from '../outbox/append';
import { expireOrders } from './expire';
import { unitsByArea } from './ga-release';
import { type GaLine, type GaTaken, priceGaAreas, takeGaUnits } from './ga-units';
import { priorResponse, storeResponse } from './idempotency';

export interface PlaceHoldInput {
  eventId: string;
  userId: string;
  /** Where the order's confirmation and notices go: the buyer token's email claim, kept on the order. */
  buyerEmail?: string;
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
/** What hold_open answers: the opening, and past a replay or a missing event the seats and the buyer's standing. */
type Opened = { opening: Opening; seats?: PricedSeat[]; held?: number; occupied?: Occupant[] };

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
  const hash = requestHash(ga.length ? [input.eventId, seatIds, ga] : [input.eventId, seatIds]);
  const cause = { cellId: ctx.cellId, correlationId: input.correlationId, causationId: null };

  return withWriteTx(
    ctx,
    async (tx) => {
      const { opening, seats = [], held = 0, occupied = [] } = await openHold(ctx, tx, input, seatIds, hash);
      if (!opening.claimed) {
        const prior = await priorResponse(tx, input.userId, input.idempotencyKey, hash);
        return { body: prior as HoldResponse, replayed: true };
      }
      const rules = saleRules(opening, input.eventId, places);
      refuseMissing(seatIds, seats);
      const gaLines = await priceGaAreas(tx, input.eventId, ga);
      if (new Set([...seats, ...gaLines].map((x) => x.currency)).size !== 1)
        throw new DomainError('bad_request', 'the places asked for are priced in different currencies');
      enforceBuyerLimit(rules.max_seats_per_order, held, places);
      await refuseOccupied(tx, cause, occupied);
      const gaTaken = await takeGaUnits(tx, cause, gaLines);
      const body = await writeHold(tx, cause, input, rules, { seats, gaLines, gaTaken });
      return { body, replayed: false };
    },
    { fencedByWork: true },
  );
}

/**
 * The hold's first statement, hold_open (sql/functions/hold_open.sql), takes every lock and read of the hold
 * in one round trip: the writer's fence; the idempotency key's claim, the event's hold rules under
 * FOR SHARE of the event row and the buyer's row for the event; the requested seats in id order;
 * then, with a snapshot taken after those locks were granted, the places the buyer already holds
 * or bought and the requested seats still on a hold or a ticket. The evacuation's freeze updates
 * the event row, so a hold racing it either commits before the freeze returns or sees `moving`
 * (inventory/freeze.ts). Every hold takes the buyer's row, then its seats, so the order is the
 * same for all and none deadlocks; different buyers never wait on each other's row. The expiry
 * (ISO, to the millisecond) is now(), the transaction's start, plus the TTL: the database clock
 * decides expiry everywhere, and the hold row gets the same. A replay, or an event not in this
 * cell, answers the opening alone.
 */
async function openHold(
  ctx: CellContext,
  tx: Tx,
  input: PlaceHoldInput,
  seatIds: string[],
  hash: string,
): Promise<Opened> {
  const opened = await tx.execute<{ opened: Opened }>(sql`
    SELECT hold_open(${ctx.cellId}, ${ctx.epoch}, ${input.userId}, ${input.idempotencyKey}, ${hash},
                     ${input.eventId}, ${uuids(seatIds)}) AS opened`);
  return opened.rows[0]!.opened;
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

/** Every requested seat must be one of the event's: hold_open found and locked those that are. */
function refuseMissing(seatIds: string[], seats: PricedSeat[]): void {
  if (seats.length === seatIds.length) return;
  const found = new Set(seats.map((s) => s.id));
  throw new DomainError('seats_not_found', 'seats not found in this event', {
    seatIds: seatIds.filter((id) => !found.has(id)),
  });
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
    throw seatsUnavailable('some seats are no longer available', { seatIds: [...new Set(taken)].sort() });
  }
}

/**
 * Everything the hold writes, in one statement: the order, the hold, its seats and GA places,
 * the HoldCreated event in the outbox, and the response stored under the idempotency key. The
 * v2 event's sale context is what was just priced, not read back. It is the transaction's last
 * statement, so the transaction commits with it, in the same round trip (db/batched-tx.ts).
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
    ...(gaLines.length ? { ga: saleGa(gaLines) } : {}),
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
  await tx.execute(
    committing(sql`
    WITH o AS (
      INSERT INTO orders (id, event_id, user_id, buyer_email, status, amount, currency, correlation_id)
      VALUES (${orderId}, ${eventId}, ${userId}, ${input.buyerEmail ?? null}, 'pending_payment', ${amount}, ${currency}, ${input.correlationId})
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
    ${storeResponse(userId, input.idempotencyKey, body)}`),
  );
  return body;
}

/** The GA places of a sale context, one entry per area in id order (as the ledger reads them back in outbox/append.ts). */
const saleGa = (lines: GaLine[]): NonNullable<SaleContext['ga']> =>
  [...lines]
    .sort((a, b) => (a.areaId < b.areaId ? -1 : 1))
    .map(({ areaId, area, tier, quantity, price }) => ({ areaId, area, tier, quantity, price }));

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
