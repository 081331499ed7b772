import { randomUUID } from 'node:crypto';
import {
  cellTopics,
  currentTraceparent,
  type EventPayload,
  type EventType,
  eventPayloads,
  eventPayloadsV2,
  hasV2,
  type SaleContext,
  type TypedEnvelope,
} from '@onsale/contracts';
import { type SQL, sql } from 'drizzle-orm';
import type { Tx } from '../db/client';
import { areaPrice, seatPrice } from '../holds/seat-price';

export interface Causation {
  cellId: string;
  correlationId: string;
  /** The eventId (or request id) that caused this event; null for a saga's first event. */
  causationId: string | null;
}

/**
 * The order's sale context as the ledger has it inside this transaction: reporting reads it
 * from the event alone, because nothing outside the cell may query the cell's database.
 */
async function saleContext(tx: Tx, orderId: string): Promise<SaleContext> {
  const rows = await tx.execute<{
    tenant_id: string;
    event_id: string;
    amount: number;
    currency: string;
    seat_id: string | null;
    section: string | null;
    tier: string | null;
    price: number | null;
  }>(sql`
    SELECT e.tenant_id, o.event_id, o.amount, o.currency, s.id AS seat_id, s.section, s.tier, ${seatPrice} AS price
      FROM orders o
      JOIN events e ON e.id = o.event_id
      LEFT JOIN holds h ON h.order_id = o.id
      LEFT JOIN hold_seats hs ON hs.hold_id = h.id
      LEFT JOIN seats s ON s.id = hs.seat_id
      LEFT JOIN price_tiers t ON t.event_id = s.event_id AND t.code = s.tier
     WHERE o.id = ${orderId}
     ORDER BY s.id`);
  const first = rows.rows[0];
  if (!first) throw new Error(`order ${orderId} is not in the ledger`);
  // Released places stay in hold_ga_units (marked): an expiry or refund fact still names what the order held.
  const ga = await tx.execute<{ area_id: string; area: string; tier: string; quantity: number; price: number }>(sql`
    SELECT a.id AS area_id, a.name AS area, a.tier, sum(u.quantity)::int AS quantity, ${areaPrice} AS price
      FROM holds h
      JOIN hold_ga_units u ON u.hold_id = h.id
      JOIN ga_areas a ON a.id = u.area_id
      JOIN price_tiers t ON t.event_id = a.event_id AND t.code = a.tier
     WHERE h.order_id = ${orderId}
     GROUP BY a.id, a.name, a.tier, t.price, t.fee, t.fees_included
     ORDER BY a.id`);
  return {
    tenantId: first.tenant_id,
    eventId: first.event_id,
    amount: Number(first.amount),
    currency: first.currency,
    seats: rows.rows
      .filter((r) => r.seat_id !== null)
      .map((r) => ({ seatId: r.seat_id!, section: r.section!, tier: r.tier, price: Number(r.price) })),
    ...(ga.rows.length
      ? {
          ga: ga.rows.map((r) => ({
            areaId: r.area_id,
            area: r.area,
            tier: r.tier,
            quantity: Number(r.quantity),
            price: Number(r.price),
          })),
        }
      : {}),
  };
}

const traceparent = (): { traceparent?: string } => {
  const value = currentTraceparent();
  return value ? { traceparent: value } : {};
};

/**
 * Records a saga event in the outbox inside the caller's transaction, so it commits (or not)
 * with the business write.
 */
export async function appendEvent<T extends EventType>(
  tx: Tx,
  cause: Causation,
  eventType: T,
  aggregateId: string,
  payload: EventPayload<T>,
  /** The sale context of a v2 event, when the caller has just written it (else read from the ledger). */
  sale?: SaleContext,
): Promise<TypedEnvelope<T>> {
  const envelope = await outboxEnvelope(tx, cause, eventType, aggregateId, payload, sale);
  await tx.execute(outboxInsert(cause.cellId, envelope));
  return envelope;
}

/**
 * A saga event's envelope. The payload is validated against the shared contract first: a
 * producer can never publish what consumers would reject. Events whose outcome reporting
 * counts go out as version 2, carrying the sale context (a superset of v1).
 */
export async function outboxEnvelope<T extends EventType>(
  tx: Tx,
  cause: Causation,
  eventType: T,
  aggregateId: string,
  payload: EventPayload<T>,
  sale?: SaleContext,
): Promise<TypedEnvelope<T>> {
  const v2 = hasV2(eventType);
  return {
    eventId: randomUUID(),
    eventType,
    schemaVersion: v2 ? 2 : 1,
    aggregateId,
    occurredAt: new Date().toISOString(),
    correlationId: cause.correlationId,
    causationId: cause.causationId,
    cellId: cause.cellId,
    // The span that wrote it (a request's transaction, a consumer's handling): the trace goes on from here.
    ...traceparent(),
    payload: (v2
      ? eventPayloadsV2[eventType].parse({ ...payload, sale: sale ?? (await saleContext(tx, aggregateId)) })
      : eventPayloads[eventType].parse(payload)) as EventPayload<T>,
  };
}

/** The outbox row of an envelope, as a statement (the hold writes it in the same statement as the hold). */
export const outboxInsert = (cellId: string, envelope: TypedEnvelope<EventType>): SQL => sql`
    INSERT INTO outbox (event_id, aggregate_id, event_type, topic, envelope)
    VALUES (${envelope.eventId}, ${envelope.aggregateId}, ${envelope.eventType}, ${cellTopics(cellId).purchase},
            ${JSON.stringify(envelope)}::jsonb)`;
