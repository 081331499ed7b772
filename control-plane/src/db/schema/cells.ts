import type { InferSelectModel } from 'drizzle-orm';
import { sql } from 'drizzle-orm';
import { check, integer, pgTable, text, uuid } from 'drizzle-orm/pg-core';
import { timestamps } from './columns';

export const CELL_STATUSES = ['active', 'draining', 'down', 'evacuated'] as const;

export const cells = pgTable(
  'cells',
  {
    id: text('id').primaryKey(),
    baseUrl: text('base_url').notNull(),
    region: text('region').notNull(),
    status: text('status', { enum: CELL_STATUSES }).notNull().default('active'),
    /** How many concurrent onsales (events not ended) the cell is sized for; placement divides by it. */
    capacity: integer('capacity').notNull().default(10),
    /** A cell dedicated to one (headline) event takes no other placements. */
    dedicatedEventId: uuid('dedicated_event_id'),
    ...timestamps,
  },
  (t) => [
    check('cells_status_check', sql`${t.status} in ('active','draining','down','evacuated')`),
    check('cells_capacity_check', sql`${t.capacity} > 0`),
  ],
);
export type Cell = InferSelectModel<typeof cells>;
