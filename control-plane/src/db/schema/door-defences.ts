import type { InferSelectModel } from 'drizzle-orm';
import { sql } from 'drizzle-orm';
import { boolean, check, integer, pgTable, uuid } from 'drizzle-orm/pg-core';
import { tstz } from './columns';
import { events } from './events';

/**
 * What the waiting room's door asks of a buyer for one onsale, set by an operator (waiting-room/door.ts). No row:
 * no proof of work, no device binding required.
 */
export const doorDefences = pgTable(
  'door_defences',
  {
    eventId: uuid('event_id')
      .primaryKey()
      .references(() => events.id, { onDelete: 'cascade' }),
    /** Leading zero bits every join's proof of work needs; 0 asks for none. */
    powDifficulty: integer('pow_difficulty').notNull().default(0),
    /** Challenges issued per second above which each doubling adds a bit; null keeps the difficulty fixed. */
    powAdaptiveAbovePerSecond: integer('pow_adaptive_above_per_second'),
    /** The most the adaptive rule may ask. */
    powMaxDifficulty: integer('pow_max_difficulty').notNull().default(24),
    /** Every join must name a device key, so every admission token is bound to one (cnf.jkt). */
    requireDeviceBinding: boolean('require_device_binding').notNull().default(false),
    updatedAt: tstz('updated_at').notNull().defaultNow(),
  },
  (t) => [
    check(
      'door_defences_pow_check',
      sql`${t.powDifficulty} between 0 and 32 and ${t.powMaxDifficulty} between ${t.powDifficulty} and 32`,
    ),
    check(
      'door_defences_adaptive_check',
      sql`${t.powAdaptiveAbovePerSecond} is null or ${t.powAdaptiveAbovePerSecond} > 0`,
    ),
  ],
);
export type DoorDefences = InferSelectModel<typeof doorDefences>;
