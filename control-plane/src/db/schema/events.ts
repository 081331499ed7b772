import type { InferSelectModel } from 'drizzle-orm';
import { sql } from 'drizzle-orm';
import { boolean, check, index, integer, pgTable, primaryKey, text, uniqueIndex, uuid } from 'drizzle-orm/pg-core';
import { cells } from './cells';
import { timestamps, tstz } from './columns';
import { tenants } from './tenants';

export const EVENT_STATUSES = ['draft', 'scheduled', 'on_sale', 'paused', 'sold_out', 'ended'] as const;
export type EventStatus = (typeof EVENT_STATUSES)[number];

export const events = pgTable(
  'events',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    tenantId: uuid('tenant_id')
      .notNull()
      .references(() => tenants.id),
    name: text('name').notNull(),
    venue: text('venue').notNull(),
    /** The venue's IANA time zone: promoters read and type onsale times in it. */
    timeZone: text('time_zone').notNull().default('UTC'),
    startsAt: tstz('starts_at').notNull(),
    onsaleAt: tstz('onsale_at'),
    status: text('status', { enum: EVENT_STATUSES }).notNull().default('draft'),
    cellId: text('cell_id').references(() => cells.id),
    /** Pinned by a promoter or operator: the least-loaded placement no longer applies. */
    cellPinned: boolean('cell_pinned').notNull().default(false),
    /** Increases on every change of purchase cell; admission tokens carry it. */
    directoryEpoch: integer('directory_epoch').notNull().default(0),
    seatCount: integer('seat_count').notNull().default(0),
    seatMapVersion: integer('seat_map_version').notNull().default(0),
    /**
     * The Idempotency-Key the event was created with (unique per tenant) and a hash of that request: a retry after a
     * lost answer, or a form sent twice, gets this event back instead of creating a second one.
     */
    creationKey: text('creation_key'),
    creationHash: text('creation_hash'),
    ...timestamps,
  },
  (t) => [
    index('events_tenant_idx').on(t.tenantId, t.createdAt),
    uniqueIndex('events_creation_key_idx').on(t.tenantId, t.creationKey),
    index('events_cell_idx').on(t.cellId),
    check('events_status_check', sql`${t.status} in ('draft','scheduled','on_sale','paused','sold_out','ended')`),
  ],
);
export type EventRow = InferSelectModel<typeof events>;

export const priceTiers = pgTable(
  'price_tiers',
  {
    eventId: uuid('event_id')
      .notNull()
      .references(() => events.id, { onDelete: 'cascade' }),
    code: text('code').notNull(),
    name: text('name').notNull(),
    /** Minor units (cents). */
    price: integer('price').notNull(),
    currency: text('currency').notNull(),
    /** The service fee per ticket, minor units: inside `price` when feesIncluded, on top of it otherwise. */
    fee: integer('fee').notNull().default(0),
    feesIncluded: boolean('fees_included').notNull().default(true),
  },
  (t) => [
    primaryKey({ columns: [t.eventId, t.code] }),
    check('price_tiers_price_check', sql`${t.price} > 0`),
    check('price_tiers_fee_check', sql`${t.fee} >= 0`),
  ],
);

/** General-admission areas of the seat map (standing floor, lawn): a capacity and a tier, no seats. Ids stay stable by name. */
export const gaAreas = pgTable(
  'ga_areas',
  {
    id: uuid('id').primaryKey(),
    eventId: uuid('event_id')
      .notNull()
      .references(() => events.id, { onDelete: 'cascade' }),
    name: text('name').notNull(),
    capacity: integer('capacity').notNull(),
    tierCode: text('tier_code').notNull(),
  },
  (t) => [
    uniqueIndex('ga_areas_event_name_uq').on(t.eventId, t.name),
    check('ga_areas_capacity_check', sql`${t.capacity} > 0`),
  ],
);
export type PriceTier = InferSelectModel<typeof priceTiers>;

/** Seat ids are minted here and stay stable across re-uploads (matched by label): cells and buyers use them. */
export const seats = pgTable(
  'seats',
  {
    id: uuid('id').primaryKey(),
    eventId: uuid('event_id')
      .notNull()
      .references(() => events.id, { onDelete: 'cascade' }),
    label: text('label').notNull(),
    section: text('section').notNull(),
    row: text('row').notNull(),
    tierCode: text('tier_code').notNull(),
  },
  (t) => [uniqueIndex('seats_event_label_uq').on(t.eventId, t.label)],
);
export type SeatRow = InferSelectModel<typeof seats>;
