import { z } from 'zod';
import { OrderStatus } from './holds';

/**
 * The order as its buyer reads it (GET /events/{eventId}/orders/{orderId}): the cell builds it,
 * its route declares it, and the platform's own clients (the demo buyer, the test shoppers) read it.
 */
export const OrderView = z.object({
  orderId: z.string(),
  eventId: z.string(),
  status: OrderStatus,
  amount: z.number().int().describe('minor units, computed in the cell from the price tiers'),
  currency: z.string(),
  holdExpiresAt: z.string().nullable(),
  failureReason: z.string().nullable(),
  seats: z.array(
    z.object({ seatId: z.string(), label: z.string(), section: z.string(), row: z.string(), price: z.number() }),
  ),
  /** General-admission places: a quantity of an area, each unit priced by the area's tier. */
  gaPlaces: z.array(z.object({ areaId: z.string(), area: z.string(), quantity: z.number().int(), price: z.number() })),
  /** One per seat or GA place; a GA ticket names its area and unit number instead of a seat. */
  tickets: z.array(
    z.object({
      ticketId: z.string(),
      seatId: z.string().nullable(),
      ga: z.object({ areaId: z.string(), area: z.string(), unit: z.number().int() }).nullable(),
      token: z.string(),
    }),
  ),
  /** The client secret is present only while paying is the buyer's move (pending_payment). */
  payment: z
    .object({ paymentIntentId: z.string(), status: z.string(), clientSecret: z.string().optional() })
    .nullable(),
});
export type OrderView = z.infer<typeof OrderView>;

/** One line of a buyer's "my orders": what the order is for and where it stands, not its seats or tickets. */
export const BuyerOrderSummary = z.object({
  orderId: z.string(),
  eventId: z.string(),
  eventName: z.string(),
  eventStartsAt: z.string(),
  status: OrderStatus,
  amount: z.number().int().describe('minor units'),
  currency: z.string(),
  createdAt: z.string(),
});
export type BuyerOrderSummary = z.infer<typeof BuyerOrderSummary>;

/** A page of "my orders": the most orders one answer lists, from each cell and once the router has merged them. */
export const BUYER_ORDERS_PAGE = 100;

/**
 * Where the next page of "my orders" starts: after the last order shown, named by its creation time (to the
 * millisecond, as `createdAt` says it) and its id, the order every cell and the router sort by (newest first, then by
 * id). One cursor for every cell, so the router asks each for its orders after it and merges.
 */
const NOT_A_CURSOR = 'not a cursor this list gave (nextAfter)';
export const BuyerOrdersAfter = z
  .string()
  .regex(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z_[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/, {
    message: NOT_A_CURSOR,
    abort: true,
  })
  // A time no calendar has (month 13, 30 February) matches the pattern; it is no cursor either.
  .refine((s) => {
    const at = s.slice(0, 24);
    return !Number.isNaN(Date.parse(at)) && new Date(at).toISOString() === at;
  }, NOT_A_CURSOR);
export const buyerOrdersAfter = (o: Pick<BuyerOrderSummary, 'createdAt' | 'orderId'>) => `${o.createdAt}_${o.orderId}`;
export const readBuyerOrdersAfter = (after: string) => {
  const [createdAt, orderId] = after.split('_') as [string, string];
  return { createdAt, orderId };
};

/** Newest first, then by id: the order of "my orders" in each cell and across them. */
export const byNewestOrder = (a: BuyerOrderSummary, b: BuyerOrderSummary) =>
  codeUnits(b.createdAt, a.createdAt) || codeUnits(a.orderId, b.orderId);
const codeUnits = (x: string, y: string) => (x < y ? -1 : x > y ? 1 : 0);
