import type { InferSelectModel } from 'drizzle-orm';
import { boolean, index, integer, jsonb, pgTable, text, uuid } from 'drizzle-orm/pg-core';
import { timestamps, tstz } from './columns';
import { events } from './events';

/** What one role is raised to while an onsale is warm (Application Auto Scaling's min and max task counts). */
export interface RoleCapacity {
  min: number;
  max: number;
}

/** The roles a pre-warm raises: the event's cell (its API, its workers), the edge router and the waiting room. */
export const PREWARM_ROLES = ['router', 'waitingRoom', 'cellApi', 'cellWorkers'] as const;
export type PrewarmRole = (typeof PREWARM_ROLES)[number];
export type CapacityPlan = Record<PrewarmRole, RoleCapacity>;

/** The capacity an onsale should have: raised at scaleOutAt on the cell's and the control plane's services, back at scaleInAt. */
export interface PrewarmWindow {
  cellId: string;
  scaleOutAt: string;
  scaleInAt: string;
  capacity: CapacityPlan;
}

export const PREWARM_STATUSES = ['pending', 'syncing', 'synced', 'failed'] as const;

/**
 * An onsale's pre-warm, as the control plane wants it (its window, or none once cancelled) and where it last put it
 * on AWS (`appliedCellId`). Written in the schedule's or the cancel's transaction; the worker's sync makes AWS's
 * scheduled actions match it (prewarm/sync.ts). `version` counts the changes, so a sync that ran against an older
 * one leaves the row pending for the next pass. It outlives the onsale row, which a cancel deletes.
 */
export const prewarms = pgTable(
  'prewarms',
  {
    eventId: uuid('event_id')
      .primaryKey()
      .references(() => events.id, { onDelete: 'cascade' }),
    window: jsonb('window').$type<PrewarmWindow>().notNull(),
    /** The onsale was cancelled before it started: its actions are to go, wherever they were put. */
    cancelled: boolean('cancelled').notNull().default(false),
    version: integer('version').notNull().default(1),
    status: text('status', { enum: PREWARM_STATUSES }).notNull().default('pending'),
    /** The cell whose services hold this onsale's actions now: where a move or a cancel must delete them. */
    appliedCellId: text('applied_cell_id'),
    attempts: integer('attempts').notNull().default(0),
    lastError: text('last_error'),
    nextAttemptAt: tstz('next_attempt_at').notNull().defaultNow(),
    leaseUntil: tstz('lease_until'),
    syncedAt: tstz('synced_at'),
    ...timestamps,
  },
  (t) => [index('prewarms_due_idx').on(t.status, t.nextAttemptAt)],
);
export type Prewarm = InferSelectModel<typeof prewarms>;
