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

/**
 * The most Stripe charges in one payment, in minor units: its documented maximum for most currencies (999,999.99 of
 * a two-decimal currency). A larger order's payment is refused, so the platform never prices one.
 */
export const MAX_CHARGE = 99_999_999;
/** The most a buyer pays for one place (price plus an added fee): an order of MAX_SEATS_PER_HOLD places stays within MAX_CHARGE. */
export const MAX_SEAT_PRICE = Math.floor(MAX_CHARGE / MAX_SEATS_PER_HOLD);

// The ISO 4217 codes in use, from the runtime's ICU, less the IMF's and ALBA's units of account (XDR, XSU), which no
// card is charged in. A made-up code (XXX, ABC) could be stored but never paid.
const CURRENCIES = new Set(
  Intl.supportedValuesOf('currency')
    .filter((c) => c !== 'XDR' && c !== 'XSU')
    .map((c) => c.toLowerCase()),
);
/** A lower-case ISO 4217 currency code (`eur`), as the platform stores and charges it. */
export const isCurrency = (code: string) => CURRENCIES.has(code);
export const CURRENCY_MESSAGE = 'currency must be a three-letter ISO 4217 currency code, such as eur';
const Currency = z.string().refine(isCurrency, CURRENCY_MESSAGE);

/**
 * The pricing rule for one tier, wherever a tier is written (the seat-map upload, the fee editor, the cell's load):
 * a fee included in the price is at most the price, and what a buyer pays for a place is at most MAX_SEAT_PRICE.
 * The first broken, naming the field to change (none: the tier may be sold).
 */
export function tierPriceIssues(t: { price: number; fee: number; fees: 'included' | 'added' }): {
  field: 'price' | 'fee';
  message: string;
}[] {
  const cap = `at most ${MAX_SEAT_PRICE} minor units a place, so that an order of ${MAX_SEATS_PER_HOLD} stays within the payment provider's largest charge (${MAX_CHARGE})`;
  if (t.price > MAX_SEAT_PRICE) return [{ field: 'price', message: `price must be ${cap}` }];
  if (t.fees === 'included' && t.fee > t.price)
    return [{ field: 'fee', message: 'a fee included in the price cannot exceed the price' }];
  if (tierSeatPrice(t) > MAX_SEAT_PRICE) return [{ field: 'fee', message: `price plus the added fee must be ${cap}` }];
  return [];
}

/** Seat map loaded into a cell by the control plane (all or nothing). */
export const SEATS_PER_LOAD_MAX = 100_000;
export const SeatLoad = z.object({
  id: z.string().uuid(),
  label: z.string().min(1).max(64),
  section: z.string().min(1).max(64),
  row: z.string().min(1).max(16),
  price: z.number().int().positive().max(MAX_SEAT_PRICE),
  currency: Currency,
  /** The price tier's code; reporting groups sales by it. A tier declared in `tiers` prices the seat. */
  tier: z.string().min(1).max(64).optional(),
});

/**
 * A price tier of the event. `price` is the ticket price in minor units; `fee` the service fee.
 * With fees `included` the fee is part of `price` (the buyer pays `price`); with fees `added`
 * the buyer pays `price + fee`. The cell computes every order's amount from these.
 */
export const PriceTierLoad = z
  .object({
    code: z.string().min(1).max(64),
    name: z.string().min(1).max(200),
    price: z.number().int().positive(),
    currency: Currency,
    fee: z.number().int().nonnegative().default(0),
    fees: z.enum(['included', 'added']).default('included'),
  })
  .superRefine((t, ctx) => {
    for (const i of tierPriceIssues(t)) ctx.addIssue({ code: 'custom', path: [i.field], message: i.message });
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
    maxSeatsPerOrder: z.number().int().min(1).max(MAX_SEATS_PER_HOLD).default(MAX_SEATS_PER_HOLD),
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
