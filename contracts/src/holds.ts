import { z } from 'zod';

export const MAX_SEATS_PER_HOLD = 8;

/** An id as PostgreSQL compares it, case aside: two spellings of one seat are one seat, not two distinct ids. */
const Uuid = z.string().uuid().toLowerCase();

/** A quantity of places from a general-admission area (no seat ids: the cell counts them). */
export const GaQuantity = z
  .object({
    areaId: Uuid,
    quantity: z.number().int().min(1).max(MAX_SEATS_PER_HOLD),
  })
  .strict();
export type GaQuantity = z.infer<typeof GaQuantity>;

/**
 * What a buyer holds in one order: reserved seats by id and/or general-admission places by area
 * and quantity. Together at least one and at most MAX_SEATS_PER_HOLD places.
 */
export const HoldRequest = z
  .object({
    seatIds: z
      .array(Uuid)
      .max(MAX_SEATS_PER_HOLD)
      .refine((ids) => new Set(ids).size === ids.length, { message: 'seat ids must be distinct' })
      .meta({ uniqueItems: true })
      .optional(),
    ga: z
      .array(GaQuantity)
      .max(MAX_SEATS_PER_HOLD)
      .refine((g) => new Set(g.map((x) => x.areaId)).size === g.length, { message: 'one entry per area' })
      .optional(),
  })
  .strict()
  .superRefine((req, ctx) => {
    const places = (req.seatIds?.length ?? 0) + (req.ga ?? []).reduce((n, g) => n + g.quantity, 0);
    if (places === 0)
      ctx.addIssue({ code: 'custom', path: ['seatIds'], message: 'ask for at least one seat or GA place' });
    else if (places > MAX_SEATS_PER_HOLD)
      ctx.addIssue({
        code: 'custom',
        path: [req.ga?.length ? 'ga' : 'seatIds'],
        message: `at most ${MAX_SEATS_PER_HOLD} places per hold`,
      });
  });
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

/**
 * What the buyer pays for one seat of a tier, in minor units: the rule the control plane shows promoters. The
 * cell prices orders with the same rule in SQL, seat_price (cell/sql/functions/seat_price.sql); the cell's
 * seat-price test runs both over the same cases.
 */
export const tierSeatPrice = (t: Pick<PriceTierLoad, 'price' | 'fee' | 'fees'>) =>
  t.price + (t.fees === 'added' ? t.fee : 0);
/**
 * A general-admission area (standing floor, lawn): a capacity sold by quantity, no seat ids,
 * priced by a tier declared in the load's `tiers`.
 */
export const GA_AREAS_PER_EVENT_MAX = 100;
export const GaAreaLoad = z.object({
  id: z.string().uuid(),
  name: z.string().min(1).max(64),
  capacity: z.number().int().positive().max(1_000_000),
  tier: z.string().min(1).max(64),
});
export type GaAreaLoad = z.infer<typeof GaAreaLoad>;

export const EventLoad = z
  .object({
    eventId: z.string().uuid(),
    tenantId: z.string().min(1),
    name: z.string().min(1).max(200),
    startsAt: z.string().datetime({ offset: true }),
    holdTtlSeconds: z.number().int().min(30).max(3600).default(600),
    maxSeatsPerOrder: z.number().int().min(1).max(8).default(8),
    directoryEpoch: z.number().int().nonnegative().default(0),
    /** Reserved seats; an event of general-admission areas only has none. */
    seats: z.array(SeatLoad).max(SEATS_PER_LOAD_MAX),
    /** The event's price tiers; a seat whose `tier` names one is priced by it (its own price must agree). */
    tiers: z.array(PriceTierLoad).max(100).optional(),
    /** General-admission areas beside the seats; each names one of `tiers`. */
    gaAreas: z.array(GaAreaLoad).max(GA_AREAS_PER_EVENT_MAX).optional(),
  })
  .refine((load) => load.seats.length > 0 || (load.gaAreas?.length ?? 0) > 0, {
    path: ['seats'],
    message: 'an event needs seats or general-admission areas',
  });
export type EventLoad = z.infer<typeof EventLoad>;
