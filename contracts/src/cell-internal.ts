import { z } from 'zod';

/**
 * The cell's internal API as the control plane calls it: one schema per answer, used by the
 * cell's routes to declare (and serialize) it and by the control plane's client to check it.
 */

/** What a cell answers to an event load (PUT /internal/events/{eventId}); a repeated load is `created: false`. */
export const EventLoadAnswer = z.object({ eventId: z.string(), seats: z.number().int(), created: z.boolean() });
export type EventLoadAnswer = z.infer<typeof EventLoadAnswer>;

export const SALES_STATUSES = ['on_sale', 'paused', 'canceled'] as const;
export type SalesStatus = (typeof SALES_STATUSES)[number];

/** PUT /internal/events/{eventId}/sales: pause, resume or cancel an event's sale in its cell. */
export const SalesStatusRequest = z
  .object({
    status: z.enum(SALES_STATUSES),
    /** Shown to buyers whose holds are refused, and kept on cancelled orders' history. */
    reason: z.string().min(1).max(200).optional(),
  })
  .strict();
export type SalesStatusRequest = z.infer<typeof SalesStatusRequest>;

export const SalesStatusAnswer = z.object({
  eventId: z.string(),
  status: z.enum(SALES_STATUSES),
  /** What a cancellation ended in this call (zero for pause and resume, and for a repeated cancel). */
  canceled: z.object({
    holdsReleased: z.number().int(),
    refundsRequested: z.number().int(),
    ticketsVoided: z.number().int(),
    pendingCapture: z.number().int(),
  }),
});
export type SalesStatusAnswer = z.infer<typeof SalesStatusAnswer>;

/** The control plane cancels one paid order for its promoter: refunded through the saga, its seats then return to sale. */
export const RefundOrderRequest = z
  .object({
    /** Kept on the order's history (failure_reason) and on RefundRequested. */
    reason: z.string().min(1).max(200),
  })
  .strict();
export type RefundOrderRequest = z.infer<typeof RefundOrderRequest>;

export const RefundOrderAnswer = z.object({ orderId: z.string().uuid(), status: z.string() });
export type RefundOrderAnswer = z.infer<typeof RefundOrderAnswer>;

/** Evacuation (cell/src/http/routes/internal.evacuation.ts): an event's sales frozen for a move, or not. */
export const EvacuationFreeze = z.object({ eventId: z.string(), frozen: z.boolean() });
export type EvacuationFreeze = z.infer<typeof EvacuationFreeze>;

/** The source's side of a move: the seats sold or held in this cell and what is still in flight. */
export const LedgerView = z.object({
  eventId: z.string(),
  frozen: z.boolean(),
  occupiedSeatIds: z.array(z.string()),
  ticketedSeats: z.number(),
  activeHolds: z.number(),
  openOrders: z.number(),
});
export type LedgerView = z.infer<typeof LedgerView>;

/** Seats the target blocks (or releases) for a source cell. */
export const BlockedSeatsRequest = z.object({
  sourceCell: z.string().min(1),
  seatIds: z.array(z.string().uuid()).max(200_000),
});
export const BlockedSeatsAnswer = z.object({ eventId: z.string(), blocked: z.number() });
export type BlockedSeatsAnswer = z.infer<typeof BlockedSeatsAnswer>;
export const BlockedSeatsList = z.object({ eventId: z.string(), seatIds: z.array(z.string()) });

/**
 * POST /internal/revocations: an admission revocation the control plane delivers to every registered cell, which
 * enforces it in its own Redis. Times are unix seconds; the cell keeps it until `expiresAt`, when every token it
 * covers has expired anyway. Repeating a delivery sets the same key again (idempotent).
 */
export const RevocationNotice = z
  .object({
    jti: z.string().min(1).max(200).optional(),
    /** Every admission of this buyer issued up to `revokedAt`. */
    sub: z.string().min(1).max(200).optional(),
    revokedAt: z.number().int().nonnegative(),
    expiresAt: z.number().int().nonnegative(),
  })
  .strict()
  .refine((n) => !n.jti !== !n.sub, { message: 'give exactly one of jti or sub', path: ['jti'] });
export type RevocationNotice = z.infer<typeof RevocationNotice>;

/** What the cell enforces: its Redis key and how long it lives (0: the revocation had already expired). */
export const RevocationNoticeAnswer = z.object({ key: z.string(), ttlSeconds: z.number().int().nonnegative() });
export type RevocationNoticeAnswer = z.infer<typeof RevocationNoticeAnswer>;
