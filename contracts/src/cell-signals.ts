import { z } from 'zod';

/**
 * Health signals a cell exposes to the release controller (GET /internal/signals). Every
 * figure is measured over the cell's recent window; a null latency means "not measured yet"
 * (no traffic), a null consumer lag that the cell's broker did not answer in time.
 */
export const CellSignals = z.object({
  cellId: z.string(),
  measuredAt: z.string(),
  holdLatencyP99Ms: z.number().nullable(),
  commitLatencyP99Ms: z.number().nullable(),
  lockWaits: z.number().int().nonnegative(),
  connectionUse: z.number().min(0).max(1),
  outboxAgeMs: z.number().nonnegative(),
  consumerLag: z.number().int().nonnegative().nullable(),
  activeHolds: z.number().int().nonnegative(),
  expiryDelayMs: z.number().nonnegative(),
  availableSeats: z.record(z.string(), z.number().int().nonnegative()),
});
export type CellSignals = z.infer<typeof CellSignals>;

/** Cell status in the control plane's registry, as the router reads it from the feed. */
export const CellStatus = z.enum(['active', 'draining', 'down', 'evacuated']);
export type CellStatus = z.infer<typeof CellStatus>;

export const DirectoryFeed = z.object({
  version: z.number().int().nonnegative(),
  cells: z.array(z.object({ id: z.string(), baseUrl: z.string().url(), region: z.string(), status: CellStatus })),
  events: z.array(
    z.object({
      eventId: z.string().uuid(),
      cellId: z.string(),
      epoch: z.number().int(),
      /** Being evacuated to another cell: new holds pause (503 event_moving) until the directory flips. */
      moving: z.boolean().optional(),
      /**
       * The cells the event sold in before a move, most recent first. An order lives and dies in the cell that took
       * it, so reading one (or its tickets, or releasing its hold) follows this trail when the current cell does not
       * have it.
       */
      formerCells: z.array(z.string()).optional(),
    }),
  ),
});
export type DirectoryFeed = z.infer<typeof DirectoryFeed>;
