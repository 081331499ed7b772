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

/** The most orders one cell lists for one buyer (newest first). */
export const BUYER_ORDERS_LIMIT = 100;
