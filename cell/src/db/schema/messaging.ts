import { sql } from 'drizzle-orm';
import { bigint, bigserial, index, jsonb, pgTable, primaryKey, text, timestamp, uuid } from 'drizzle-orm/pg-core';

const ts = (name: string) => timestamp(name, { withTimezone: true, mode: 'date' });

/** Transactional outbox: written with the business change, published by the relay. */
export const outbox = pgTable(
  'outbox',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    eventId: uuid('event_id').notNull().unique(),
    aggregateId: uuid('aggregate_id').notNull(),
    eventType: text('event_type').notNull(),
    topic: text('topic').notNull(),
    envelope: jsonb('envelope').notNull(),
    createdAt: ts('created_at').notNull().defaultNow(),
    publishedAt: ts('published_at'),
  },
  (t) => [index('outbox_unpublished_idx').on(t.id).where(sql`published_at IS NULL`)],
);

/**
 * The relay's leases: one row per claimed batch, covering the outbox ids from `first_id` to `last_id`,
 * instead of a lease written on every outbox row. A row is written once, when it is marked published;
 * writing a lease on each row as well doubled the claim's cost.
 */
export const relayLeases = pgTable('relay_leases', {
  owner: text('owner').primaryKey(),
  firstId: bigint('first_id', { mode: 'number' }).notNull(),
  lastId: bigint('last_id', { mode: 'number' }).notNull(),
  until: ts('until').notNull(),
});

/** Inbox: one row per (consumer, eventId) applied; a redelivery finds it and does nothing. */
export const inbox = pgTable(
  'inbox',
  {
    consumer: text('consumer').notNull(),
    eventId: uuid('event_id').notNull(),
    processedAt: ts('processed_at').notNull().defaultNow(),
  },
  (t) => [primaryKey({ columns: [t.consumer, t.eventId] })],
);

/** Stripe webhook events already accepted, by Stripe's event id. */
export const stripeEvents = pgTable('stripe_events', {
  id: text('id').primaryKey(),
  type: text('type').notNull(),
  paymentIntentId: text('payment_intent_id'),
  receivedAt: ts('received_at').notNull().defaultNow(),
});
