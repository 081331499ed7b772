import { sql } from 'drizzle-orm';
import { bigserial, index, jsonb, pgTable, text, uuid } from 'drizzle-orm/pg-core';
import { tstz } from './columns';

/**
 * The control plane's facts, written in the same transaction as the change they describe and
 * published to its fact topic by the outbox relay (claim with a lease, publish, mark sent).
 */
export const factOutbox = pgTable(
  'fact_outbox',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    eventId: uuid('event_id').notNull().unique(),
    aggregateId: uuid('aggregate_id').notNull(),
    eventType: text('event_type').notNull(),
    envelope: jsonb('envelope').notNull(),
    createdAt: tstz('created_at').notNull().defaultNow(),
    leaseUntil: tstz('lease_until'),
    publishedAt: tstz('published_at'),
  },
  (t) => [index('fact_outbox_pending_idx').on(t.id).where(sql`published_at IS NULL`)],
);
