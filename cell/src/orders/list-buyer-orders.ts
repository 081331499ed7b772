import { BUYER_ORDERS_PAGE, type BuyerOrderSummary, type OrderStatus, readBuyerOrdersAfter } from '@onsale/contracts';
import { sql } from 'drizzle-orm';
import type { CellContext } from '../context';

/**
 * A page of the buyer's orders in this cell (orders_user_idx), newest first then by id, after the order `after`
 * names when given: the cell's share of a page of "my orders". Times compare to the millisecond, as `createdAt`
 * shows them, so the cursor a buyer is given selects exactly the orders after the last one shown.
 */
export async function listBuyerOrders(ctx: CellContext, userId: string, after?: string): Promise<BuyerOrderSummary[]> {
  const from = after ? readBuyerOrdersAfter(after) : undefined;
  const at = sql`date_trunc('milliseconds', o.created_at)`;
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
       ${from ? sql`AND (${at} < ${from.createdAt}::timestamptz OR (${at} = ${from.createdAt}::timestamptz AND o.id > ${from.orderId}::uuid))` : sql``}
     ORDER BY ${at} DESC, o.id
     LIMIT ${BUYER_ORDERS_PAGE}`);
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
