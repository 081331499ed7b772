import { BUYER_ORDERS_LIMIT, type BuyerOrderSummary, type OrderStatus } from '@onsale/contracts';
import { sql } from 'drizzle-orm';
import type { CellContext } from '../context';

/** The buyer's orders in this cell, newest first (orders_user_idx): the cell's share of "my orders". */
export async function listBuyerOrders(ctx: CellContext, userId: string): Promise<BuyerOrderSummary[]> {
  const found = await ctx.database.db.execute<{
    id: string;
    event_id: string;
    name: string;
    starts_at: Date;
    status: OrderStatus;
    amount: number;
    currency: string;
    created_at: Date;
  }>(sql`
    SELECT o.id, o.event_id, e.name, e.starts_at, o.status, o.amount, o.currency, o.created_at
      FROM orders o JOIN events e ON e.id = o.event_id
     WHERE o.user_id = ${userId}
     ORDER BY o.created_at DESC, o.id
     LIMIT ${BUYER_ORDERS_LIMIT}`);
  return found.rows.map((r) => ({
    orderId: r.id,
    eventId: r.event_id,
    eventName: r.name,
    eventStartsAt: new Date(r.starts_at).toISOString(),
    status: r.status,
    amount: r.amount,
    currency: r.currency,
    createdAt: new Date(r.created_at).toISOString(),
  }));
}
