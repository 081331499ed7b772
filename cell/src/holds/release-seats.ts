import { sql } from 'drizzle-orm';
import type { Tx } from '../db/client';
import { releaseGaUnits } from './release-ga-units';

export type HoldStatus = 'active' | 'confirmed';

/**
 * Ends the order's hold if it is in one of `from` and frees its seats and general-admission
 * places. Returns what was released, or null when there was no such hold (already ended: a
 * replay or a lost race).
 */
export async function releaseHoldSeats(
  tx: Tx,
  orderId: string,
  from: HoldStatus[],
): Promise<{ holdId: string; seatIds: string[]; gaUnits?: { areaId: string; quantity: number }[] } | null> {
  const rows = await tx.execute<{ hold_id: string | null; seat_ids: string[] }>(sql`
    WITH h AS (
      UPDATE holds SET status = 'released', ended_at = now()
       WHERE order_id = ${orderId} AND status = ANY(${sql.param(from)}::text[]) RETURNING id
    ), s AS (
      UPDATE hold_seats SET released_at = now() WHERE hold_id IN (SELECT id FROM h) AND released_at IS NULL
      RETURNING seat_id
    )
    SELECT (SELECT id FROM h) AS hold_id, coalesce((SELECT array_agg(seat_id) FROM s), '{}') AS seat_ids`);
  const row = rows.rows[0];
  if (!row?.hold_id) return null;
  const ga = (await releaseGaUnits(tx, [row.hold_id])).get(row.hold_id);
  return { holdId: row.hold_id, seatIds: row.seat_ids, ...(ga ? { gaUnits: ga } : {}) };
}
