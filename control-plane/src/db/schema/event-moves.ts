import type { InferSelectModel } from 'drizzle-orm';
import { sql } from 'drizzle-orm';
import { check, index, integer, jsonb, pgTable, text, uniqueIndex, uuid } from 'drizzle-orm/pg-core';
import { cells } from './cells';
import { timestamps, tstz } from './columns';
import { events } from './events';

/**
 * The steps of moving one on-sale event between cells, in order. `step` is the last step that
 * finished; every step is idempotent, so a mover that crashed resumes by running the next one.
 */
export const MOVE_STEPS = [
  'planned',
  'fencing',
  'fenced',
  'drained',
  'copied',
  'flipped',
  'resumed',
  'done',
  'aborted',
] as const;
export type MoveStep = (typeof MOVE_STEPS)[number];
/** While a move is in one of these steps the directory marks the event moving (new holds wait). */
export const MOVING_STEPS: readonly MoveStep[] = ['fencing', 'fenced', 'drained', 'copied'];

export const eventMoves = pgTable(
  'event_moves',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    eventId: uuid('event_id')
      .notNull()
      .references(() => events.id),
    fromCell: text('from_cell')
      .notNull()
      .references(() => cells.id),
    toCell: text('to_cell')
      .notNull()
      .references(() => cells.id),
    step: text('step', { enum: MOVE_STEPS }).notNull().default('planned'),
    /** How long the drain waits for in-flight holds and orders before copying what is left as blocked. */
    drainSeconds: integer('drain_seconds').notNull(),
    /** The directory epoch of the fence (moving) and of the flip (new cell). */
    fenceEpoch: integer('fence_epoch'),
    flipEpoch: integer('flip_epoch'),
    fencedAt: tstz('fenced_at'),
    drainedAt: tstz('drained_at'),
    copiedAt: tstz('copied_at'),
    flippedAt: tstz('flipped_at'),
    resumedAt: tstz('resumed_at'),
    doneAt: tstz('done_at'),
    /** What each step saw (drain outcome, seats copied as blocked, buyers re-admitted...), for the operator. */
    report: jsonb('report').notNull().default({}),
    lastError: text('last_error'),
    ...timestamps,
  },
  (t) => [
    // One move at a time per event.
    uniqueIndex('event_moves_one_open_uq').on(t.eventId).where(sql`step not in ('done', 'aborted')`),
    index('event_moves_event_idx').on(t.eventId, t.createdAt),
    check(
      'event_moves_step_check',
      sql`${t.step} in ('planned','fencing','fenced','drained','copied','flipped','resumed','done','aborted')`,
    ),
  ],
);
export type EventMove = InferSelectModel<typeof eventMoves>;
