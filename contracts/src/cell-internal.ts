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
