import { randomUUID } from 'node:crypto';
import { cellTopics, type EventPayload, type EventType, eventPayloads, type TypedEnvelope } from '@onsale/contracts';
import type { Tx } from '../db/client';
import { outbox } from '../db/schema';

export interface Causation {
  cellId: string;
  correlationId: string;
  /** The eventId (or request id) that caused this event; null for a saga's first event. */
  causationId: string | null;
}

/**
 * Records a saga event in the outbox inside the caller's transaction, so it commits (or not)
 * with the business write. The payload is validated against the shared contract first: a
 * producer can never publish what consumers would reject.
 */
export async function appendEvent<T extends EventType>(
  tx: Tx,
  cause: Causation,
  eventType: T,
  aggregateId: string,
  payload: EventPayload<T>,
): Promise<TypedEnvelope<T>> {
  const envelope = {
    eventId: randomUUID(),
    eventType,
    schemaVersion: 1,
    aggregateId,
    occurredAt: new Date().toISOString(),
    correlationId: cause.correlationId,
    causationId: cause.causationId,
    cellId: cause.cellId,
    payload: eventPayloads[eventType].parse(payload) as EventPayload<T>,
  };
  await tx.insert(outbox).values({
    eventId: envelope.eventId,
    aggregateId,
    eventType,
    topic: cellTopics(cause.cellId).purchase,
    envelope,
  });
  return envelope;
}
