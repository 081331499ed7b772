import { randomUUID } from 'node:crypto';

/**
 * One paid order's saga as a cell publishes it (8 envelopes): the events reporting counts
 * (held, paid, ticketed) are v2 and carry the sale; the saga's other steps are v1.
 * Benchmarks and tests put these on a cell's topic or in its outbox without running a saga.
 */
export function paidOrderSaga(cellId: string, sale: { tenantId: string; eventId: string }, i: number) {
  const orderId = randomUUID();
  const holdId = randomUUID();
  const paymentIntentId = `pi_sim_${orderId.slice(0, 12)}`;
  // 2.4 seats per order on average, the brief's figure.
  const seats = Array.from({ length: i % 5 < 2 ? 3 : 2 }, (_, s) => ({
    seatId: randomUUID(),
    section: `S${(i % 8) + 1}`,
    tier: s === 0 ? 'floor' : 'stand',
    price: s === 0 ? 9_500 : 5_500,
  }));
  const amount = seats.reduce((n, s) => n + s.price, 0);
  const context = { ...sale, amount, currency: 'eur', seats };
  const seatIds = seats.map((s) => s.seatId);
  const userId = `buyer-${i}`;
  const steps: [string, number, Record<string, unknown>][] = [
    [
      'HoldCreated',
      2,
      {
        orderId,
        holdId,
        eventId: sale.eventId,
        userId,
        seatIds,
        amount,
        currency: 'eur',
        expiresAt: new Date(Date.now() + 600_000).toISOString(),
        sale: context,
      },
    ],
    ['PaymentAuthorizationRequested', 1, { orderId, amount, currency: 'eur', userId }],
    ['PaymentIntentCreated', 1, { orderId, paymentIntentId, amount }],
    ['PaymentAuthorized', 1, { orderId, paymentIntentId, amount }],
    ['OrderConfirmed', 1, { orderId, holdId }],
    ['CaptureRequested', 1, { orderId, paymentIntentId, amount }],
    ['PaymentCaptured', 2, { orderId, paymentIntentId, amount, sale: context }],
    [
      'TicketIssued',
      2,
      { orderId, ticketIds: seatIds.map((_, n) => `tkt_${orderId.slice(0, 8)}_${n}`), sale: context },
    ],
  ];
  return {
    orderId,
    amount,
    seats: seats.length,
    envelopes: steps.map(([eventType, schemaVersion, payload]) => ({
      eventId: randomUUID(),
      eventType,
      schemaVersion,
      aggregateId: orderId,
      occurredAt: new Date().toISOString(),
      correlationId: orderId,
      causationId: null,
      cellId,
      payload,
    })),
  };
}
