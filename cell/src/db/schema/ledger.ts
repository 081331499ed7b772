import { sql } from 'drizzle-orm';
import {
  bigint,
  boolean,
  char,
  check,
  foreignKey,
  index,
  integer,
  pgTable,
  primaryKey,
  text,
  timestamp,
  uniqueIndex,
  uuid,
} from 'drizzle-orm/pg-core';

const ts = (name: string) => timestamp(name, { withTimezone: true, mode: 'date' });

/** The region epoch this cell's writer must hold; a fenced (older) epoch's writes are refused. */
export const cellEpoch = pgTable('cell_epoch', {
  cellId: text('cell_id').primaryKey(),
  epoch: bigint('epoch', { mode: 'number' }).notNull(),
  updatedAt: ts('updated_at').notNull().defaultNow(),
});

/** The cell's copy of an event, loaded by the control plane. */
export const events = pgTable('events', {
  id: uuid('id').primaryKey(),
  tenantId: text('tenant_id').notNull(),
  name: text('name').notNull(),
  startsAt: ts('starts_at').notNull(),
  holdTtlSeconds: integer('hold_ttl_seconds').notNull(),
  maxSeatsPerOrder: integer('max_seats_per_order').notNull(),
  directoryEpoch: integer('directory_epoch').notNull(),
  seatCount: integer('seat_count').notNull(),
  seatsHash: text('seats_hash').notNull(),
  /** on_sale | paused (new holds refused, live holds continue) | canceled (final: holds released, paid orders refunded) */
  salesStatus: text('sales_status').notNull().default('on_sale'),
  salesStatusReason: text('sales_status_reason'),
  createdAt: ts('created_at').notNull().defaultNow(),
});

export const seats = pgTable(
  'seats',
  {
    id: uuid('id').primaryKey(),
    eventId: uuid('event_id')
      .notNull()
      .references(() => events.id),
    label: text('label').notNull(),
    section: text('section').notNull(),
    row: text('row').notNull(),
    price: integer('price').notNull(),
    currency: char('currency', { length: 3 }).notNull(),
    tier: text('tier'),
  },
  (t) => [uniqueIndex('seats_event_label_uq').on(t.eventId, t.label)],
);

/** The event's price tiers, loaded with it: the hold computes an order's amount from them. */
export const priceTiers = pgTable(
  'price_tiers',
  {
    eventId: uuid('event_id')
      .notNull()
      .references(() => events.id),
    code: text('code').notNull(),
    name: text('name').notNull(),
    /** Ticket price in minor units (with the fee inside it when feesIncluded). */
    price: integer('price').notNull(),
    currency: char('currency', { length: 3 }).notNull(),
    fee: integer('fee').notNull().default(0),
    feesIncluded: boolean('fees_included').notNull().default(true),
  },
  (t) => [primaryKey({ columns: [t.eventId, t.code] })],
);

/** A general-admission area of an event (standing floor, lawn): a capacity sold by quantity, priced by its tier. */
export const gaAreas = pgTable(
  'ga_areas',
  {
    id: uuid('id').primaryKey(),
    eventId: uuid('event_id')
      .notNull()
      .references(() => events.id),
    name: text('name').notNull(),
    capacity: integer('capacity').notNull(),
    tier: text('tier').notNull(),
    /** Unit numbers handed to tickets so far: a GA ticket's unit number is its place in this sequence. */
    unitsNumbered: integer('units_numbered').notNull().default(0),
  },
  (t) => [uniqueIndex('ga_areas_event_name_uq').on(t.eventId, t.name), check('ga_areas_capacity', sql`capacity > 0`)],
);

/**
 * An area's free units, spread over a few rows (stripes) so concurrent holds on one hot area
 * lock different rows instead of queueing on one. The CHECK is the last guard: a stripe can
 * never go below zero (no oversell) nor above its share (no double return).
 */
export const gaStripes = pgTable(
  'ga_stripes',
  {
    areaId: uuid('area_id')
      .notNull()
      .references(() => gaAreas.id),
    stripe: integer('stripe').notNull(),
    capacity: integer('capacity').notNull(),
    remaining: integer('remaining').notNull(),
  },
  (t) => [
    primaryKey({ columns: [t.areaId, t.stripe] }),
    check('ga_stripes_remaining_bounds', sql`remaining >= 0 AND remaining <= capacity`),
  ],
);

/** What a hold took from each stripe of an area; released once, when the units go back. */
export const holdGaUnits = pgTable(
  'hold_ga_units',
  {
    holdId: uuid('hold_id')
      .notNull()
      .references(() => holds.id),
    areaId: uuid('area_id').notNull(),
    stripe: integer('stripe').notNull(),
    quantity: integer('quantity').notNull(),
    releasedAt: ts('released_at'),
  },
  (t) => [
    primaryKey({ columns: [t.holdId, t.areaId, t.stripe] }),
    check('hold_ga_units_quantity', sql`quantity > 0`),
    foreignKey({ columns: [t.areaId, t.stripe], foreignColumns: [gaStripes.areaId, gaStripes.stripe] }),
  ],
);

export const orders = pgTable(
  'orders',
  {
    id: uuid('id').primaryKey(),
    eventId: uuid('event_id')
      .notNull()
      .references(() => events.id),
    userId: text('user_id').notNull(),
    /** The buyer's address from their identity token's `email` claim when the order was placed; null when it had none. */
    buyerEmail: text('buyer_email'),
    status: text('status').notNull(),
    amount: integer('amount').notNull(),
    currency: char('currency', { length: 3 }).notNull(),
    version: integer('version').notNull().default(1),
    correlationId: text('correlation_id').notNull(),
    failureReason: text('failure_reason'),
    createdAt: ts('created_at').notNull().defaultNow(),
    updatedAt: ts('updated_at').notNull().defaultNow(),
  },
  (t) => [
    index('orders_user_idx').on(t.userId),
    index('orders_status_idx').on(t.status, t.updatedAt),
    index('orders_event_user_idx').on(t.eventId, t.userId),
  ],
);

export const holds = pgTable(
  'holds',
  {
    id: uuid('id').primaryKey(),
    orderId: uuid('order_id')
      .notNull()
      .references(() => orders.id),
    eventId: uuid('event_id').notNull(),
    userId: text('user_id').notNull(),
    /** active → confirmed (seats kept for the order) | released (by the buyer) | expired */
    status: text('status').notNull(),
    expiresAt: ts('expires_at').notNull(),
    createdAt: ts('created_at').notNull().defaultNow(),
    endedAt: ts('ended_at'),
  },
  (t) => [
    uniqueIndex('holds_order_uq').on(t.orderId),
    index('holds_active_expiry_idx').on(t.expiresAt).where(sql`status = 'active'`),
  ],
);

export const holdSeats = pgTable(
  'hold_seats',
  {
    holdId: uuid('hold_id')
      .notNull()
      .references(() => holds.id),
    seatId: uuid('seat_id')
      .notNull()
      .references(() => seats.id),
    releasedAt: ts('released_at'),
  },
  (t) => [
    primaryKey({ columns: [t.holdId, t.seatId] }),
    // Invariant 1, enforced by the database: a seat has at most one unreleased hold.
    uniqueIndex('hold_seats_one_active_per_seat').on(t.seatId).where(sql`released_at IS NULL`),
  ],
);

export const payments = pgTable(
  'payments',
  {
    orderId: uuid('order_id')
      .primaryKey()
      .references(() => orders.id),
    paymentIntentId: text('payment_intent_id').notNull(),
    status: text('status').notNull(),
    amount: integer('amount').notNull(),
    currency: char('currency', { length: 3 }).notNull(),
    clientSecret: text('client_secret'),
    createdAt: ts('created_at').notNull().defaultNow(),
    updatedAt: ts('updated_at').notNull().defaultNow(),
  },
  (t) => [uniqueIndex('payments_intent_uq').on(t.paymentIntentId)],
);

/**
 * A ticket is for one seat or for one unit of a general-admission area (numbered in the area in
 * the order tickets were issued). A voided ticket (event cancelled, order refunded) stays as a
 * record but no longer occupies its seat: a returned seat can be sold and ticketed again.
 */
export const tickets = pgTable(
  'tickets',
  {
    id: text('id').primaryKey(),
    orderId: uuid('order_id')
      .notNull()
      .references(() => orders.id),
    eventId: uuid('event_id').notNull(),
    seatId: uuid('seat_id').references(() => seats.id),
    gaAreaId: uuid('ga_area_id').references(() => gaAreas.id),
    unitNo: integer('unit_no'),
    userId: text('user_id').notNull(),
    token: text('token').notNull(),
    issuedAt: ts('issued_at').notNull().defaultNow(),
    /** Set when the event is cancelled or the order refunded: the ticket no longer admits anyone. */
    voidedAt: ts('voided_at'),
  },
  (t) => [
    // Invariant 2: a seat has at most one valid ticket (one, ever, until a refund returns it).
    uniqueIndex('tickets_seat_uq').on(t.seatId).where(sql`voided_at IS NULL`),
    uniqueIndex('tickets_ga_unit_uq').on(t.gaAreaId, t.unitNo),
    index('tickets_order_idx').on(t.orderId),
    check(
      'tickets_seat_or_ga_unit',
      sql`(seat_id IS NOT NULL AND ga_area_id IS NULL AND unit_no IS NULL) OR (seat_id IS NULL AND ga_area_id IS NOT NULL AND unit_no IS NOT NULL)`,
    ),
  ],
);

export const idempotencyKeys = pgTable(
  'idempotency_keys',
  {
    userId: text('user_id').notNull(),
    key: text('key').notNull(),
    requestHash: text('request_hash').notNull(),
    responseStatus: integer('response_status'),
    responseBody: text('response_body'),
    createdAt: ts('created_at').notNull().defaultNow(),
    expiresAt: ts('expires_at').notNull(),
  },
  (t) => [primaryKey({ columns: [t.userId, t.key] }), index('idempotency_expiry_idx').on(t.expiresAt)],
);

/**
 * One row per (event, buyer) that has ever held seats: the hold transaction locks it (after the
 * seats, before any write), so two concurrent holds by the same buyer queue and the second counts
 * the first's seats against the per-buyer limit. The count itself is read from the ledger under the lock.
 */
export const buyerLimits = pgTable(
  'buyer_limits',
  {
    eventId: uuid('event_id')
      .notNull()
      .references(() => events.id),
    userId: text('user_id').notNull(),
    createdAt: ts('created_at').notNull().defaultNow(),
  },
  (t) => [primaryKey({ columns: [t.eventId, t.userId] })],
);

/** Things that must not happen but did (money taken for seats already released): a human looks. */
export const incidents = pgTable(
  'incidents',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    orderId: uuid('order_id').notNull(),
    kind: text('kind').notNull(),
    details: text('details').notNull(),
    createdAt: ts('created_at').notNull().defaultNow(),
  },
  (t) => [uniqueIndex('incidents_order_kind_uq').on(t.orderId, t.kind)],
);
