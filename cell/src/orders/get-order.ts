import { bySeatPlace, type OrderStatus, type OrderView } from '@onsale/contracts';
import { sql } from 'drizzle-orm';
import type { CellContext } from '../context';
import { DomainError } from '../errors';
import { areaPrice, seatPrice } from '../holds/seat-price';

/** Payment is still the buyer's move only in these states; the client secret is shown then and only then. */
const PAYABLE = new Set(['pending_payment']);

/** The order as its owner sees it. Anyone else gets a 404: an order id reveals nothing. */
export async function getOrder(ctx: CellContext, eventId: string, orderId: string, userId: string): Promise<OrderView> {
  const db = ctx.database.db;
  const found = await db.execute<{
    status: OrderStatus;
    user_id: string;
    amount: number;
    currency: string;
    failure_reason: string | null;
    expires_at: Date | null;
    payment_intent_id: string | null;
    payment_status: string | null;
    client_secret: string | null;
  }>(sql`
    SELECT o.status, o.user_id, o.amount, o.currency, o.failure_reason, h.expires_at,
           p.payment_intent_id, p.status AS payment_status, p.client_secret
      FROM orders o
      LEFT JOIN holds h ON h.order_id = o.id
      LEFT JOIN payments p ON p.order_id = o.id
     WHERE o.id = ${orderId} AND o.event_id = ${eventId}`);
  const order = found.rows[0];
  if (!order || order.user_id !== userId) throw new DomainError('not_found', 'order not found');

  const [seatRows, gaRows, ticketRows] = await Promise.all([
    db.execute<{ seat_id: string; label: string; section: string; row: string; price: number }>(sql`
      SELECT s.id AS seat_id, s.label, s.section, s.row, ${seatPrice} AS price
        FROM holds h JOIN hold_seats hs ON hs.hold_id = h.id JOIN seats s ON s.id = hs.seat_id
        LEFT JOIN price_tiers t ON t.event_id = s.event_id AND t.code = s.tier
       WHERE h.order_id = ${orderId}`),
    db.execute<{ area_id: string; area: string; quantity: number; price: number }>(sql`
      SELECT a.id AS area_id, a.name AS area, sum(u.quantity)::int AS quantity,
             ${areaPrice} AS price
        FROM holds h JOIN hold_ga_units u ON u.hold_id = h.id
        JOIN ga_areas a ON a.id = u.area_id
        JOIN price_tiers t ON t.event_id = a.event_id AND t.code = a.tier
       WHERE h.order_id = ${orderId}
       GROUP BY a.id, a.name, t.price, t.fees_included, t.fee ORDER BY a.name`),
    db.execute<{
      id: string;
      seat_id: string | null;
      ga_area_id: string | null;
      area: string | null;
      unit_no: number | null;
      token: string;
    }>(
      sql`SELECT k.id, k.seat_id, k.ga_area_id, a.name AS area, k.unit_no, k.token
            FROM tickets k LEFT JOIN ga_areas a ON a.id = k.ga_area_id
           WHERE k.order_id = ${orderId} AND k.voided_at IS NULL
           ORDER BY k.seat_id, a.name, k.unit_no`,
    ),
  ]);

  const seats = seatRows.rows.sort(bySeatPlace);
  // Each seat's ticket in the seats' order; GA tickets after them, by area and unit (the query's order).
  const seatRank = new Map(seats.map((s, i) => [s.seat_id, i]));
  const rank = (t: { seat_id: string | null }) => seatRank.get(t.seat_id ?? '') ?? seats.length;
  const tickets = ticketRows.rows.sort((a, b) => rank(a) - rank(b));

  return {
    orderId,
    eventId,
    status: order.status,
    amount: order.amount,
    currency: order.currency.trim(),
    holdExpiresAt: order.expires_at ? new Date(order.expires_at).toISOString() : null,
    failureReason: order.failure_reason,
    seats: seats.map((s) => ({
      seatId: s.seat_id,
      label: s.label,
      section: s.section,
      row: s.row,
      price: s.price,
    })),
    gaPlaces: gaRows.rows.map((g) => ({ areaId: g.area_id, area: g.area, quantity: g.quantity, price: g.price })),
    tickets: tickets.map((t) => ({
      ticketId: t.id,
      seatId: t.seat_id,
      ga: t.ga_area_id && t.area && t.unit_no !== null ? { areaId: t.ga_area_id, area: t.area, unit: t.unit_no } : null,
      token: t.token,
    })),
    payment: order.payment_intent_id
      ? {
          paymentIntentId: order.payment_intent_id,
          status: order.payment_status ?? 'unknown',
          ...(PAYABLE.has(order.status) && order.client_secret ? { clientSecret: order.client_secret } : {}),
        }
      : null,
  };
}
