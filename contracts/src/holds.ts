import { z } from 'zod';

export const MAX_SEATS_PER_HOLD = 8;

export const HoldRequest = z
  .object({
    seatIds: z
      .array(z.string().uuid())
      .min(1)
      .max(MAX_SEATS_PER_HOLD)
      .refine((ids) => new Set(ids).size === ids.length, { message: 'seat ids must be distinct' })
      .meta({ uniqueItems: true }),
  })
  .strict();
export type HoldRequest = z.infer<typeof HoldRequest>;

export const OrderStatus = z.enum([
  'pending_payment',
  'confirmed',
  'paid',
  'ticketed',
  'expired',
  'released',
  'failed',
  'canceled',
  'refunding',
  'refunded',
]);
export type OrderStatus = z.infer<typeof OrderStatus>;

export const HoldResponse = z.object({
  orderId: z.string().uuid(),
  holdId: z.string().uuid(),
  status: OrderStatus,
  expiresAt: z.string(),
});
export type HoldResponse = z.infer<typeof HoldResponse>;

/** Seat map loaded into a cell by the control plane (all or nothing). */
export const SEATS_PER_LOAD_MAX = 100_000;
export const SeatLoad = z.object({
  id: z.string().uuid(),
  label: z.string().min(1).max(64),
  section: z.string().min(1).max(64),
  row: z.string().min(1).max(16),
  price: z.number().int().positive(),
  currency: z.string().regex(/^[a-z]{3}$/),
  /** The price tier's code; reporting groups sales by it. A tier declared in `tiers` prices the seat. */
  tier: z.string().min(1).max(64).optional(),
});

/**
 * A price tier of the event. `price` is the ticket price in minor units; `fee` the service fee.
 * With fees `included` the fee is part of `price` (the buyer pays `price`); with fees `added`
 * the buyer pays `price + fee`. The cell computes every order's amount from these.
 */
export const PriceTierLoad = z.object({
  code: z.string().min(1).max(64),
  name: z.string().min(1).max(200),
  price: z.number().int().positive(),
  currency: z.string().regex(/^[a-z]{3}$/),
  fee: z.number().int().nonnegative().default(0),
  fees: z.enum(['included', 'added']).default('included'),
});
export type PriceTierLoad = z.infer<typeof PriceTierLoad>;

/** What the buyer pays for one seat of a tier, in minor units. */
export const tierSeatPrice = (t: Pick<PriceTierLoad, 'price' | 'fee' | 'fees'>) =>
  t.price + (t.fees === 'added' ? t.fee : 0);
export const EventLoad = z.object({
  eventId: z.string().uuid(),
  tenantId: z.string().min(1),
  name: z.string().min(1).max(200),
  startsAt: z.string().datetime({ offset: true }),
  holdTtlSeconds: z.number().int().min(30).max(3600).default(600),
  maxSeatsPerOrder: z.number().int().min(1).max(8).default(8),
  directoryEpoch: z.number().int().nonnegative().default(0),
  seats: z.array(SeatLoad).min(1).max(SEATS_PER_LOAD_MAX),
  /** The event's price tiers; a seat whose `tier` names one is priced by it (its own price must agree). */
  tiers: z.array(PriceTierLoad).max(100).optional(),
});
export type EventLoad = z.infer<typeof EventLoad>;
