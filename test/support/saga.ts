import { randomUUID } from 'node:crypto';
import { cellTopics, type EventPayload, type EventType } from '@onsale/contracts';
import type { Broker } from '@onsale/messaging/broker';
import type { TestCell } from './cell';

/** An envelope as a producer of the cell would write it. */
export function envelope<T extends EventType>(cellId: string, eventType: T, orderId: string, payload: EventPayload<T>) {
  return {
    eventId: randomUUID(),
    eventType,
    schemaVersion: 1,
    aggregateId: orderId,
    occurredAt: new Date().toISOString(),
    correlationId: `test-${orderId}`,
    causationId: null,
    cellId,
    payload,
  };
}

/** Puts a saga event on the cell's purchase topic, keyed by its order, as a producer would. */
export async function inject(broker: Broker, cellId: string, message: ReturnType<typeof envelope>, times = 1) {
  const msg = { key: message.aggregateId, value: JSON.stringify(message), headers: { eventType: message.eventType } };
  await broker.publish(
    cellTopics(cellId).purchase,
    Array.from({ length: times }, () => msg),
  );
}

export const outboxEvents = (cell: TestCell, orderId: string) =>
  cell.db
    .query<{ event_type: string; envelope: { payload: Record<string, unknown> } }>(
      'SELECT event_type, envelope FROM outbox WHERE aggregate_id = $1 ORDER BY id',
      [orderId],
    )
    .then((rows) => rows);

export const orderStatus = async (cell: TestCell, orderId: string) =>
  (await cell.db.query<{ status: string }>('SELECT status FROM orders WHERE id = $1', [orderId]))[0]?.status;

/** Plays the payment worker's part: the PaymentIntent exists and is recorded with its event. */
export async function recordPaymentIntent(cell: TestCell, orderId: string, amount: number) {
  const paymentIntentId = `pi_test_${orderId.slice(0, 8)}`;
  await cell.db.query(
    `INSERT INTO payments (order_id, payment_intent_id, status, amount, currency, client_secret)
     VALUES ($1, $2, 'requires_payment_method', $3, 'eur', $4) ON CONFLICT DO NOTHING`,
    [orderId, paymentIntentId, amount, `${paymentIntentId}_secret_test`],
  );
  return paymentIntentId;
}
