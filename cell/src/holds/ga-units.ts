import type { GaQuantity } from '@onsale/contracts';
import { sql } from 'drizzle-orm';
import type { Tx } from '../db/client';
import { uuids } from '../db/sql';
import { DomainError, seatsUnavailable } from '../errors';
import type { Causation } from '../outbox/append';
import { expireOrders } from './expire';
import { areaPrice } from './seat-price';

/**
 * How many rows an area's free count is spread over. One counter row serializes every hold on
 * the area behind the row lock (each holder keeps it until commit); with stripes, concurrent
 * holds pick different rows. Measured with `pnpm bench:holds` (GA holds/s, 16 stripes against 1).
 */
export const GA_STRIPES = 16;

/** Splits an area's capacity over its stripes: the first ones take the remainder. */
export function stripeCapacities(capacity: number): number[] {
  const n = Math.min(GA_STRIPES, capacity);
  return Array.from({ length: n }, (_, i) => Math.floor(capacity / n) + (i < capacity % n ? 1 : 0));
}

const RECLAIM_BATCH = 50;

export type GaLine = { areaId: string; area: string; tier: string; quantity: number; price: number; currency: string };
export type GaTaken = { areaId: string; stripe: number; quantity: number };

/** The requested areas of the event with their tier's price per place (fees added where the tier adds them). */
export async function priceGaAreas(tx: Tx, eventId: string, ga: GaQuantity[]): Promise<GaLine[]> {
  if (ga.length === 0) return [];
  const rows = await tx.execute<{ id: string; area: string; tier: string; price: number; currency: string }>(sql`
    SELECT a.id, a.name AS area, a.tier, ${areaPrice} AS price, trim(t.currency) AS currency
      FROM ga_areas a JOIN price_tiers t ON t.event_id = a.event_id AND t.code = a.tier
     WHERE a.event_id = ${eventId} AND a.id = ANY(${uuids(ga.map((g) => g.areaId))})`);
  const byId = new Map(rows.rows.map((r) => [r.id, r]));
  const missing = ga.filter((g) => !byId.has(g.areaId)).map((g) => g.areaId);
  if (missing.length > 0)
    throw new DomainError('seats_not_found', 'general-admission areas not found in this event', { areaIds: missing });
  return ga.map((g) => {
    const { area, tier, price, currency } = byId.get(g.areaId)!;
    return { areaId: g.areaId, area, tier, quantity: g.quantity, price, currency };
  });
}

/**
 * Takes the requested places, area by area in id order. Each request comes from one stripe when
 * one has enough: first one nobody has locked (no waiting while others are free), else it waits
 * for one. Only near the end of an area, when no stripe alone has enough, does it lock the area's
 * stripes in stripe order and take across them (one order for every splitter: no deadlock among
 * them; a single-stripe taker holds nothing else of the area while it waits). Still too few
 * places expires the area's lapsed holds (as a seat's next buyer reclaims its lapsed hold) and
 * tries once more; then the whole hold is refused and its transaction rolls back what it took.
 */
export async function takeGaUnits(
  tx: Tx,
  cause: Omit<Causation, 'correlationId'>,
  lines: GaLine[],
): Promise<GaTaken[]> {
  const taken: GaTaken[] = [];
  for (const line of [...lines].sort((a, b) => (a.areaId < b.areaId ? -1 : 1))) {
    const { areaId, quantity } = line;
    const one =
      (await fromOneStripe(tx, areaId, quantity, 'FOR UPDATE SKIP LOCKED')) ??
      (await fromOneStripe(tx, areaId, quantity, 'FOR UPDATE'));
    if (one !== undefined) {
      taken.push({ areaId, stripe: one, quantity });
      continue;
    }
    let split = await acrossStripes(tx, areaId, quantity);
    if (!split) {
      await reclaimLapsed(tx, cause, areaId);
      split = await acrossStripes(tx, areaId, quantity);
    }
    if (!split) {
      const free = await tx.execute<{ n: number }>(
        sql`SELECT coalesce(sum(remaining), 0)::int AS n FROM ga_stripes WHERE area_id = ${areaId}`,
      );
      const remaining = free.rows[0]?.n ?? 0;
      throw seatsUnavailable(
        remaining === 0 ? 'this general-admission area is sold out' : `only ${remaining} places left in this area`,
        { gaAreas: [{ areaId, requested: quantity, remaining }] },
      );
    }
    taken.push(...split);
  }
  return taken;
}

/** One stripe with enough places, taken; stripes are tried from a random one on. */
async function fromOneStripe(tx: Tx, areaId: string, quantity: number, lock: string): Promise<number | undefined> {
  const r = await tx.execute<{ stripe: number }>(sql`
    WITH pick AS (
      SELECT stripe FROM ga_stripes WHERE area_id = ${areaId} AND remaining >= ${quantity}::int
       ORDER BY (stripe + ${Math.floor(Math.random() * GA_STRIPES)}::int) % ${GA_STRIPES}::int LIMIT 1 ${sql.raw(lock)})
    UPDATE ga_stripes s SET remaining = s.remaining - ${quantity}::int FROM pick
     WHERE s.area_id = ${areaId} AND s.stripe = pick.stripe
    RETURNING s.stripe`);
  return r.rows[0]?.stripe;
}

/** Every free stripe of the area locked in stripe order, the quantity taken across them; null when they hold too few. */
async function acrossStripes(tx: Tx, areaId: string, quantity: number): Promise<GaTaken[] | null> {
  const r = await tx.execute<{ stripe: number; take: number }>(sql`
    WITH locked AS (
      SELECT stripe, remaining FROM ga_stripes WHERE area_id = ${areaId} AND remaining > 0 ORDER BY stripe FOR UPDATE
    ), plan AS (
      SELECT stripe, least(remaining, ${quantity}::int - coalesce(sum(remaining) OVER
               (ORDER BY stripe ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING), 0)::int) AS take
        FROM locked
    )
    SELECT stripe, take FROM plan WHERE take > 0`);
  if (r.rows.reduce((n, x) => n + x.take, 0) < quantity) return null;
  await tx.execute(sql`
    UPDATE ga_stripes s SET remaining = s.remaining - x.take
      FROM unnest(${sql.param(r.rows.map((x) => x.stripe))}::int[], ${sql.param(r.rows.map((x) => x.take))}::int[])
           AS x(stripe, take)
     WHERE s.area_id = ${areaId} AND s.stripe = x.stripe`);
  return r.rows.map((x) => ({ areaId, stripe: x.stripe, quantity: x.take }));
}

/** Lapsed holds still counted against the area, expired now (bounded; the expiry worker does the rest). */
async function reclaimLapsed(tx: Tx, cause: Omit<Causation, 'correlationId'>, areaId: string): Promise<void> {
  const lapsed = await tx.execute<{ order_id: string }>(sql`
    SELECT DISTINCT h.order_id FROM hold_ga_units g JOIN holds h ON h.id = g.hold_id
     WHERE g.area_id = ${areaId} AND g.released_at IS NULL AND h.status = 'active' AND h.expires_at <= now()
     LIMIT ${RECLAIM_BATCH}`);
  await expireOrders(
    tx,
    cause,
    lapsed.rows.map((r) => r.order_id),
  );
}

/**
 * The general-admission places a paid order's confirmed hold owns, each with a unit number drawn
 * from its area's sequence in the caller's (ticketing) transaction: a ticket carries the area and
 * its unit. Areas this order already has tickets for are skipped, so a retried issue draws nothing.
 */
export async function numberGaUnits(
  tx: Tx,
  orderId: string,
): Promise<{ areaId: string; area: string; index: number; unit: number }[]> {
  const owned = await tx.execute<{ area_id: string; name: string; quantity: number }>(sql`
    SELECT g.area_id, a.name, sum(g.quantity)::int AS quantity
      FROM holds h JOIN hold_ga_units g ON g.hold_id = h.id JOIN ga_areas a ON a.id = g.area_id
     WHERE h.order_id = ${orderId} AND h.status = 'confirmed' AND g.released_at IS NULL
       AND NOT EXISTS (SELECT 1 FROM tickets t WHERE t.order_id = ${orderId} AND t.ga_area_id = g.area_id)
     GROUP BY g.area_id, a.name ORDER BY g.area_id`);
  const units: { areaId: string; area: string; index: number; unit: number }[] = [];
  for (const row of owned.rows) {
    const drawn = await tx.execute<{ last: number }>(sql`
      UPDATE ga_areas SET units_numbered = units_numbered + ${row.quantity} WHERE id = ${row.area_id}
      RETURNING units_numbered AS last`);
    const first = drawn.rows[0]!.last - row.quantity + 1;
    for (let i = 0; i < row.quantity; i++)
      units.push({ areaId: row.area_id, area: row.name, index: i + 1, unit: first + i });
  }
  return units;
}
