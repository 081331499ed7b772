import type { InferSelectModel } from 'drizzle-orm';
import { index, jsonb, pgTable, text, uuid } from 'drizzle-orm/pg-core';
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

/** Audit of revocations; the enforcement is the Redis key the cells read. */
export const revocations = pgTable(
  'revocations',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    jti: text('jti'),
    subject: text('subject'),
    reason: text('reason').notNull(),
    revokedBy: text('revoked_by').notNull(),
    createdAt: tstz('created_at').notNull(),
    expiresAt: tstz('expires_at').notNull(),
  },
  (t) => [index('revocations_jti_idx').on(t.jti), index('revocations_subject_idx').on(t.subject)],
);
export type Revocation = InferSelectModel<typeof revocations>;
