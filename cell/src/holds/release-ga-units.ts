import { sql } from 'drizzle-orm';
import type { Tx } from '../db/client';
import { uuids } from '../db/sql';

// Giving general-admission places back is shared by expiry, release and refund, and taking them
// (ga-units.ts) expires lapsed holds: kept apart so neither side imports the other.

/** Places per area, as events carry them. */
export function unitsByArea(taken: { areaId: string; quantity: number }[]): { areaId: string; quantity: number }[] {
  const sum = new Map<string, number>();
  for (const t of taken) sum.set(t.areaId, (sum.get(t.areaId) ?? 0) + t.quantity);
  return [...sum].sort(([a], [b]) => (a < b ? -1 : 1)).map(([areaId, quantity]) => ({ areaId, quantity }));
}

/**
 * Gives the places of these holds back to their stripes, once: the hold_ga_units rows are marked
 * released in the same statement that counts them, so a second call finds nothing to return
 * (and the stripe CHECK would refuse a count above capacity anyway). Returns what went back, per hold.
 */
export async function releaseGaUnits(
  tx: Tx,
  holdIds: string[],
): Promise<Map<string, { areaId: string; quantity: number }[]>> {
  const byHold = new Map<string, { areaId: string; quantity: number }[]>();
  if (holdIds.length === 0) return byHold;
  const released = await tx.execute<{ hold_id: string; area_id: string; stripe: number; quantity: number }>(sql`
    UPDATE hold_ga_units SET released_at = now()
     WHERE hold_id = ANY(${uuids(holdIds)}) AND released_at IS NULL
    RETURNING hold_id, area_id, stripe, quantity`);
  if (released.rows.length === 0) return byHold;
  const perStripe = new Map<string, { area: string; stripe: number; q: number }>();
  for (const r of released.rows) {
    const key = `${r.area_id}:${r.stripe}`;
    const s = perStripe.get(key) ?? { area: r.area_id, stripe: r.stripe, q: 0 };
    s.q += r.quantity;
    perStripe.set(key, s);
    byHold.set(r.hold_id, [...(byHold.get(r.hold_id) ?? []), { areaId: r.area_id, quantity: r.quantity }]);
  }
  // Stripes in key order, like every writer that locks more than one.
  const stripes = [...perStripe.values()].sort((a, b) =>
    a.area === b.area ? a.stripe - b.stripe : a.area < b.area ? -1 : 1,
  );
  await tx.execute(sql`
    UPDATE ga_stripes s SET remaining = s.remaining + x.q
      FROM unnest(${uuids(stripes.map((s) => s.area))}, ${sql.param(stripes.map((s) => s.stripe))}::int[],
                  ${sql.param(stripes.map((s) => s.q))}::int[]) AS x(area_id, stripe, q)
     WHERE s.area_id = x.area_id AND s.stripe = x.stripe`);
  for (const [hold, units] of byHold) byHold.set(hold, unitsByArea(units));
  return byHold;
}
