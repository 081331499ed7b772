import { sql } from 'drizzle-orm';
import { check, integer, pgTable, primaryKey, text, timestamp, uuid } from 'drizzle-orm/pg-core';

const ts = (name: string) => timestamp(name, { withTimezone: true, mode: 'date' });

/**
 * One row per notice an order's buyer is owed (its confirmation with the tickets, a refund or cancellation notice):
 * the key (order_id, kind) is what makes a notice go out once however often its event is delivered. A sender claims
 * the row (`sending`, with `claimed_at`) before it talks to the mail server and marks it `sent` after; a claim older
 * than the worker's lease is a sender that died mid-way, and the next delivery takes it over.
 */
export const notifications = pgTable(
  'notifications',
  {
    orderId: uuid('order_id').notNull(),
    kind: text('kind').notNull(),
    status: text('status').notNull(),
    attempts: integer('attempts').notNull().default(1),
    claimedAt: ts('claimed_at').notNull().defaultNow(),
    sentAt: ts('sent_at'),
    /** The Message-ID the mail went out with, derived from (order, kind): the same on a resend. */
    messageId: text('message_id'),
    /** Why a notice was not sent (`no_address`): the buyer's token had no email claim. */
    skippedReason: text('skipped_reason'),
  },
  (t) => [
    primaryKey({ name: 'notifications_order_kind_pk', columns: [t.orderId, t.kind] }),
    check('notifications_kind_ck', sql`${t.kind} IN ('order_confirmation', 'refund', 'cancellation')`),
    check('notifications_status_ck', sql`${t.status} IN ('sending', 'sent', 'skipped')`),
  ],
);
