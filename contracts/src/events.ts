import { z } from 'zod';

const Uuid = z.string().uuid();
const Money = z.number().int().nonnegative();
const Currency = z.string().regex(/^[a-z]{3}$/);
/** General-admission places per area; absent when the order has none (older producers never send it). */
const GaUnits = z.array(z.object({ areaId: Uuid, quantity: z.number().int().positive() })).optional();

/**
 * Payload schemas of the purchase saga, version 1. A breaking change adds a v2 entry beside
 * v1; consumers keep parsing both. Objects are not strict: unknown fields are ignored.
 */
export const eventPayloads = {
  HoldCreated: z.object({
    orderId: Uuid,
    holdId: Uuid,
    eventId: Uuid,
    userId: z.string(),
    /** Empty when the order holds only general-admission places (then gaUnits names them). */
    seatIds: z.array(Uuid),
    gaUnits: GaUnits,
    amount: Money,
    currency: Currency,
    expiresAt: z.string(),
  }),
  HoldReleased: z.object({ orderId: Uuid, holdId: Uuid, seatIds: z.array(Uuid), gaUnits: GaUnits, reason: z.string() }),
  HoldExpired: z.object({ orderId: Uuid, holdId: Uuid, seatIds: z.array(Uuid), gaUnits: GaUnits }),
  PaymentAuthorizationRequested: z.object({
    orderId: Uuid,
    amount: Money,
    currency: Currency,
    userId: z.string(),
  }),
  PaymentIntentCreated: z.object({ orderId: Uuid, paymentIntentId: z.string(), amount: Money }),
  PaymentAuthorized: z.object({ orderId: Uuid, paymentIntentId: z.string(), amount: Money }),
  PaymentFailed: z.object({ orderId: Uuid, paymentIntentId: z.string(), reason: z.string() }),
  OrderConfirmed: z.object({ orderId: Uuid, holdId: Uuid }),
  CaptureRequested: z.object({ orderId: Uuid, paymentIntentId: z.string(), amount: Money }),
  PaymentCaptured: z.object({ orderId: Uuid, paymentIntentId: z.string(), amount: Money }),
  CaptureFailed: z.object({ orderId: Uuid, paymentIntentId: z.string(), reason: z.string() }),
  /** The ticket issuer reads the order's general-admission places from the ledger. */
  TicketIssueRequested: z.object({ orderId: Uuid, eventId: Uuid, seatIds: z.array(Uuid) }),
  TicketIssued: z.object({ orderId: Uuid, ticketIds: z.array(z.string()).min(1) }),
  AuthorizationCancelRequested: z.object({
    orderId: Uuid,
    paymentIntentId: z.string().nullable(),
    reason: z.string(),
  }),
  AuthorizationCanceled: z.object({ orderId: Uuid, paymentIntentId: z.string() }),
  RefundRequested: z.object({
    orderId: Uuid,
    paymentIntentId: z.string(),
    amount: Money,
    reason: z.string(),
  }),
  Refunded: z.object({ orderId: Uuid, paymentIntentId: z.string(), refundId: z.string() }),
} as const;

/**
 * What reporting needs to place a fact without asking the cell: the tenant, the event, the
 * order's total and every seat with its section, price tier and price (minor units).
 */
export const SaleContext = z.object({
  tenantId: z.string(),
  eventId: Uuid,
  amount: Money,
  currency: Currency,
  seats: z.array(z.object({ seatId: Uuid, section: z.string(), tier: z.string().nullable(), price: Money })),
  /**
   * The general-admission places beside the seats, per area (`area` is its name, its section in the
   * sales reports; `price` is per place). Absent on facts published before GA places were counted and on
   * orders of seats only: such a fact holds exactly its seats.
   */
  ga: z
    .array(
      z.object({
        areaId: Uuid,
        area: z.string(),
        tier: z.string(),
        quantity: z.number().int().positive(),
        price: Money,
      }),
    )
    .optional(),
});
export type SaleContext = z.infer<typeof SaleContext>;

/**
 * Version 2 of the events whose outcome reporting counts: v1 plus the sale context. A v2
 * payload is a v1 payload with one more field, so every v1 consumer's handler reads it as is;
 * v1 messages already on the topics keep parsing.
 */
export const eventPayloadsV2 = {
  HoldCreated: eventPayloads.HoldCreated.extend({ sale: SaleContext }),
  HoldReleased: eventPayloads.HoldReleased.extend({ sale: SaleContext }),
  HoldExpired: eventPayloads.HoldExpired.extend({ sale: SaleContext }),
  PaymentFailed: eventPayloads.PaymentFailed.extend({ sale: SaleContext }),
  PaymentCaptured: eventPayloads.PaymentCaptured.extend({ sale: SaleContext }),
  TicketIssued: eventPayloads.TicketIssued.extend({ sale: SaleContext }),
  Refunded: eventPayloads.Refunded.extend({ sale: SaleContext }),
} as const;
export type V2EventType = keyof typeof eventPayloadsV2;
export const hasV2 = (eventType: string): eventType is V2EventType => eventType in eventPayloadsV2;

export type EventType = keyof typeof eventPayloads;
export type EventPayload<T extends EventType> = z.infer<(typeof eventPayloads)[T]>;

/** The envelope every saga message travels in; aggregateId is the orderId and the Kafka key. */
export const Envelope = z.object({
  eventId: Uuid,
  eventType: z.string(),
  schemaVersion: z.number().int().positive(),
  aggregateId: Uuid,
  occurredAt: z.string(),
  correlationId: z.string(),
  causationId: z.string().nullable(),
  cellId: z.string(),
  /** W3C trace context of the span that wrote the event; absent when the producer was not tracing, dropped when malformed. */
  traceparent: z.string().max(128).optional().catch(undefined),
  payload: z.unknown(),
});
export type Envelope = z.infer<typeof Envelope>;

export type TypedEnvelope<T extends EventType = EventType> = Omit<Envelope, 'eventType' | 'payload'> & {
  eventType: T;
  payload: EventPayload<T>;
};

export class EnvelopeError extends Error {
  constructor(
    message: string,
    readonly issues: unknown,
  ) {
    super(message);
    this.name = 'EnvelopeError';
  }
}

/** Parses a raw message: the envelope first, then the payload by its type and version. */
export function parseEnvelope(raw: unknown): TypedEnvelope {
  const envelope = Envelope.safeParse(raw);
  if (!envelope.success) throw new EnvelopeError('invalid envelope', envelope.error.issues);
  const { eventType, schemaVersion } = envelope.data;
  const schema =
    schemaVersion === 1
      ? eventPayloads[eventType as EventType]
      : schemaVersion === 2 && hasV2(eventType)
        ? eventPayloadsV2[eventType]
        : undefined;
  if (!schema) {
    throw new EnvelopeError(`unknown event ${eventType} v${schemaVersion}`, []);
  }
  const payload = schema.safeParse(envelope.data.payload);
  if (!payload.success) throw new EnvelopeError(`invalid ${eventType} payload`, payload.error.issues);
  return { ...envelope.data, eventType: eventType as EventType, payload: payload.data } as TypedEnvelope;
}
