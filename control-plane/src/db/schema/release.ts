import type { InferSelectModel } from 'drizzle-orm';
import { bigserial, index, jsonb, pgTable, real, text, uuid } from 'drizzle-orm/pg-core';
import { tstz } from './columns';
import { events } from './events';

export const RELEASE_MODES = ['auto', 'paused', 'pinned'] as const;
export type ReleaseMode = (typeof RELEASE_MODES)[number];

/** The release controller's state per event: R (buyers per second) and the operator's override. */
export const releaseRates = pgTable('release_rates', {
  eventId: uuid('event_id')
    .primaryKey()
    .references(() => events.id, { onDelete: 'cascade' }),
  mode: text('mode', { enum: RELEASE_MODES }).notNull().default('auto'),
  rate: real('rate').notNull(),
  pinnedRate: real('pinned_rate'),
  updatedAt: tstz('updated_at').notNull().defaultNow(),
});
export type ReleaseRate = InferSelectModel<typeof releaseRates>;

/** Every decision of the controller (and every operator override), with the signals it saw. */
export const controllerDecisions = pgTable(
  'controller_decisions',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    eventId: uuid('event_id')
      .notNull()
      .references(() => events.id, { onDelete: 'cascade' }),
    cellId: text('cell_id'),
    at: tstz('at').notNull(),
    mode: text('mode').notNull(),
    signals: jsonb('signals'),
    oldRate: real('old_rate').notNull(),
    newRate: real('new_rate').notNull(),
    reason: text('reason').notNull(),
    actor: text('actor').notNull().default('controller'),
  },
  (t) => [index('controller_decisions_event_idx').on(t.eventId, t.at)],
);
export type ControllerDecision = InferSelectModel<typeof controllerDecisions>;
