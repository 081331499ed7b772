import type { InferSelectModel } from 'drizzle-orm';
import { sql } from 'drizzle-orm';
import { check, index, integer, pgTable, text, uuid } from 'drizzle-orm/pg-core';
import { timestamps, tstz } from './columns';
import { events } from './events';

/** `gave_up`: LOAD_MAX_ATTEMPTS failed in a row; only an operator's retry or a new schedule tries again. */
export const LOAD_STATUSES = ['pending', 'loading', 'loaded', 'failed', 'gave_up'] as const;
export type LoadStatus = (typeof LOAD_STATUSES)[number];

export const onsales = pgTable(
  'onsales',
  {
    eventId: uuid('event_id')
      .primaryKey()
      .references(() => events.id, { onDelete: 'cascade' }),
    tenantId: uuid('tenant_id').notNull(),
    roomOpensAt: tstz('room_opens_at').notNull(),
    onsaleAt: tstz('onsale_at').notNull(),
    perBuyerLimit: integer('per_buyer_limit').notNull(),
    maxReleaseRate: integer('max_release_rate').notNull(),
    minReleaseRate: integer('min_release_rate').notNull(),
    maxActiveShoppers: integer('max_active_shoppers'),
    holdTtlSeconds: integer('hold_ttl_seconds').notNull(),
    loadStatus: text('load_status', { enum: LOAD_STATUSES }).notNull().default('pending'),
    loadAttempts: integer('load_attempts').notNull().default(0),
    lastLoadError: text('last_load_error'),
    lastLoadAt: tstz('last_load_at'),
    nextLoadAt: tstz('next_load_at').notNull().defaultNow(),
    loadLeaseUntil: tstz('load_lease_until'),
    loadedAt: tstz('loaded_at'),
    loadedCellId: text('loaded_cell_id'),
    loadedEpoch: integer('loaded_epoch'),
    loadedSeatMapVersion: integer('loaded_seat_map_version'),
    roomOpenedAt: tstz('room_opened_at'),
    startedAt: tstz('started_at'),
    /**
     * The queue's fairness secrets (hex, 32 random bytes each; waiting-room/fairness.ts). The seed orders the early
     * arrivals and is published, after its SHA-256 commitment, once the room opens; the salt pseudonymizes buyers
     * in the published admission log and is never published. The defaults only fill rows scheduled before them.
     */
    fairnessSeed: text('fairness_seed')
      .notNull()
      .default(sql`encode(sha256(convert_to(gen_random_uuid()::text || gen_random_uuid()::text, 'UTF8')), 'hex')`),
    fairnessSalt: text('fairness_salt')
      .notNull()
      .default(sql`encode(sha256(convert_to(gen_random_uuid()::text || gen_random_uuid()::text, 'UTF8')), 'hex')`),
    ...timestamps,
  },
  (t) => [
    index('onsales_load_idx').on(t.loadStatus, t.nextLoadAt),
    check('onsales_rates_check', sql`${t.minReleaseRate} >= 0 and ${t.maxReleaseRate} >= ${t.minReleaseRate}`),
  ],
);
export type Onsale = InferSelectModel<typeof onsales>;
