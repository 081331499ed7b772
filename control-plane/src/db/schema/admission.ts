import type { InferSelectModel } from 'drizzle-orm';
import { sql } from 'drizzle-orm';
import { index, integer, jsonb, pgTable, primaryKey, text, uuid } from 'drizzle-orm/pg-core';
import { cells } from './cells';
import { tstz } from './columns';

/**
 * Admission signing keys. A key is published in the JWKS from created_at, signs from activates_at
 * until retired_at, and stays published until published_until (retirement + the longest token life).
 * The private JWK is encrypted with the configured KEK (AES-256-GCM).
 */
export const signingKeys = pgTable('signing_keys', {
  kid: text('kid').primaryKey(),
  alg: text('alg').notNull(),
  publicJwk: jsonb('public_jwk').notNull(),
  privateKeyEnc: text('private_key_enc').notNull(),
  createdAt: tstz('created_at').notNull(),
  activatesAt: tstz('activates_at').notNull(),
  retiredAt: tstz('retired_at'),
  publishedUntil: tstz('published_until'),
});
export type SigningKey = InferSelectModel<typeof signingKeys>;

/** Audit of revocations; the enforcement is a Redis key in each cell's Redis (revocation_deliveries). */
export const revocations = pgTable(
  'revocations',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    jti: text('jti'),
    subject: text('subject'),
    reason: text('reason').notNull(),
    revokedBy: text('revoked_by').notNull(),
    /** The onsale the revocation was made for, when the operator said (the bot report counts them per onsale). */
    eventId: uuid('event_id'),
    createdAt: tstz('created_at').notNull(),
    expiresAt: tstz('expires_at').notNull(),
  },
  (t) => [
    index('revocations_jti_idx').on(t.jti),
    index('revocations_subject_idx').on(t.subject),
    index('revocations_event_idx').on(t.eventId),
  ],
);
export type Revocation = InferSelectModel<typeof revocations>;

/**
 * One row per revocation and registered cell, written with the revocation: the worker delivers it to the cell's
 * internal API until the cell has it in its own Redis (or the revocation has expired), with backoff between tries.
 */
export const revocationDeliveries = pgTable(
  'revocation_deliveries',
  {
    revocationId: uuid('revocation_id')
      .notNull()
      .references(() => revocations.id),
    cellId: text('cell_id')
      .notNull()
      .references(() => cells.id),
    attempts: integer('attempts').notNull().default(0),
    /** When the next try is due; a claim pushes it past the call's timeout, so two workers never send at once. */
    nextAttemptAt: tstz('next_attempt_at').notNull().defaultNow(),
    deliveredAt: tstz('delivered_at'),
    lastError: text('last_error'),
  },
  (t) => [
    primaryKey({ columns: [t.revocationId, t.cellId] }),
    index('revocation_deliveries_due_idx').on(t.nextAttemptAt).where(sql`delivered_at IS NULL`),
  ],
);
