import { sql } from 'drizzle-orm';
import type { CellContext } from '../context';

/** Where an entry of the timeline comes from: the cell table that recorded it. */
export type TimelineSource = 'order' | 'hold' | 'outbox' | 'inbox' | 'payment' | 'stripe_event' | 'ticket' | 'incident';

export interface TimelineEntry {
  at: string;
  source: TimelineSource;
  /** What happened, e.g. `hold.created`, `outbox.published`, `inbox.consumed`. */
  what: string;
  details: Record<string, unknown>;
}

export interface OrderTimeline {
  orderId: string;
  cellId: string;
  eventId: string;
  status: string;
  correlationId: string;
  entries: TimelineEntry[];
}

/** A timestamp as ISO 8601 UTC with Postgres's microseconds, so entries of one millisecond still sort. */
const us = (column: string) =>
  sql.raw(`to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS ${column.replace(/^\w+\./, '')}`);

/**
 * Entries of one transaction share its timestamp (now() is the transaction's start); among
 * them the cause comes first (the order and hold, the consumed message, the webhook), then its
 * effects on the ledger, then the outbox row it wrote; publication is always later.
 */
const stage = (what: string): number => {
  if (what === 'order.created') return 0;
  if (what === 'hold.created') return 1;
  if (what === 'inbox.consumed' || what === 'stripe.webhook') return 2;
  if (what === 'outbox.written') return 4;
  if (what === 'outbox.published') return 5;
  return 3;
};

/**
 * The whole history of one order from the cell's own tables, oldest first: the order and its
 * hold, every outbox row (written and published), which consumer took each event in and when,
 * the payment, the Stripe webhook events of its PaymentIntent, tickets and incidents. It holds
 * no secret: client secrets, ticket tokens and envelope payloads other than ids and reasons are
 * left out. Published outbox rows are pruned after the relay's retention; what is gone is gone.
 * `outbox.published` is when the relay marked the row, after the broker's ack: a fast consumer's
 * `inbox.consumed` may come before it.
 */
export async function orderTimeline(ctx: CellContext, orderId: string): Promise<OrderTimeline | null> {
  const db = ctx.database.db;
  const order = (
    await db.execute<{
      event_id: string;
      status: string;
      correlation_id: string;
      amount: number;
      currency: string;
      failure_reason: string | null;
      created_at: string;
      updated_at: string;
    }>(sql`SELECT event_id, status, correlation_id, amount, currency, failure_reason, ${us('created_at')}, ${us('updated_at')}
             FROM orders WHERE id = ${orderId}`)
  ).rows[0];
  if (!order) return null;

  const [holds, outbox, inbox, payment, stripe, tickets, incidents] = await Promise.all([
    db.execute<{
      id: string;
      status: string;
      created_at: string;
      expires_at: string;
      ended_at: string | null;
      seats: number;
    }>(
      sql`SELECT h.id, h.status, ${us('h.created_at')}, ${us('h.expires_at')}, ${us('h.ended_at')},
                 (SELECT count(*)::int FROM hold_seats hs WHERE hs.hold_id = h.id) AS seats
            FROM holds h WHERE h.order_id = ${orderId}`,
    ),
    db.execute<{
      event_id: string;
      event_type: string;
      topic: string;
      created_at: string;
      published_at: string | null;
      causation_id: string | null;
      schema_version: number | null;
      reason: string | null;
      payment_intent_id: string | null;
    }>(
      sql`SELECT event_id, event_type, topic, ${us('created_at')}, ${us('published_at')},
                 envelope->>'causationId' AS causation_id, (envelope->>'schemaVersion')::int AS schema_version,
                 envelope->'payload'->>'reason' AS reason, envelope->'payload'->>'paymentIntentId' AS payment_intent_id
            FROM outbox WHERE aggregate_id = ${orderId} ORDER BY id`,
    ),
    db.execute<{ consumer: string; event_id: string; event_type: string; processed_at: string }>(
      sql`SELECT i.consumer, i.event_id, o.event_type, ${us('i.processed_at')}
            FROM inbox i JOIN outbox o ON o.event_id = i.event_id
           WHERE o.aggregate_id = ${orderId}`,
    ),
    db.execute<{
      payment_intent_id: string;
      status: string;
      amount: number;
      currency: string;
      created_at: string;
      updated_at: string;
    }>(
      sql`SELECT payment_intent_id, status, amount, currency, ${us('created_at')}, ${us('updated_at')}
            FROM payments WHERE order_id = ${orderId}`,
    ),
    db.execute<{ id: string; type: string; payment_intent_id: string; received_at: string }>(
      sql`SELECT se.id, se.type, se.payment_intent_id, ${us('se.received_at')}
            FROM stripe_events se JOIN payments p ON p.payment_intent_id = se.payment_intent_id
           WHERE p.order_id = ${orderId}`,
    ),
    db.execute<{ id: string; seat_id: string; issued_at: string }>(
      sql`SELECT id, seat_id, ${us('issued_at')} FROM tickets WHERE order_id = ${orderId}`,
    ),
    db.execute<{ id: string; kind: string; details: string; created_at: string }>(
      sql`SELECT id, kind, details, ${us('created_at')} FROM incidents WHERE order_id = ${orderId}`,
    ),
  ]);

  const entries: TimelineEntry[] = [];
  const add = (at: string, source: TimelineSource, what: string, details: Record<string, unknown>) =>
    entries.push({ at, source, what, details });

  add(order.created_at, 'order', 'order.created', { amount: order.amount, currency: order.currency });
  for (const h of holds.rows) {
    add(h.created_at, 'hold', 'hold.created', { holdId: h.id, seats: h.seats, expiresAt: h.expires_at });
    if (h.ended_at) add(h.ended_at, 'hold', `hold.${h.status}`, { holdId: h.id });
  }
  for (const o of outbox.rows) {
    const details = {
      eventId: o.event_id,
      eventType: o.event_type,
      schemaVersion: o.schema_version,
      topic: o.topic,
      causationId: o.causation_id,
      ...(o.payment_intent_id ? { paymentIntentId: o.payment_intent_id } : {}),
      ...(o.reason ? { reason: o.reason } : {}),
    };
    add(o.created_at, 'outbox', 'outbox.written', details);
    if (o.published_at)
      add(o.published_at, 'outbox', 'outbox.published', {
        eventId: o.event_id,
        eventType: o.event_type,
        topic: o.topic,
      });
  }
  for (const i of inbox.rows)
    add(i.processed_at, 'inbox', 'inbox.consumed', {
      consumer: i.consumer,
      eventId: i.event_id,
      eventType: i.event_type,
    });
  for (const p of payment.rows) {
    add(p.created_at, 'payment', 'payment.created', {
      paymentIntentId: p.payment_intent_id,
      amount: p.amount,
      currency: p.currency,
    });
    if (p.updated_at !== p.created_at)
      add(p.updated_at, 'payment', `payment.${p.status}`, { paymentIntentId: p.payment_intent_id });
  }
  for (const s of stripe.rows)
    add(s.received_at, 'stripe_event', 'stripe.webhook', {
      stripeEventId: s.id,
      type: s.type,
      paymentIntentId: s.payment_intent_id,
    });
  for (const t of tickets.rows) add(t.issued_at, 'ticket', 'ticket.issued', { ticketId: t.id, seatId: t.seat_id });
  for (const i of incidents.rows)
    add(i.created_at, 'incident', `incident.${i.kind}`, { incidentId: i.id, details: i.details });
  if (order.status !== 'held' && order.updated_at !== order.created_at)
    add(
      order.updated_at,
      'order',
      `order.${order.status}`,
      order.failure_reason ? { reason: order.failure_reason } : {},
    );

  // A stable sort by time, then by causal stage; entries of one transaction share a timestamp.
  entries.sort((a, b) => a.at.localeCompare(b.at) || stage(a.what) - stage(b.what));
  return {
    orderId,
    cellId: ctx.cellId,
    eventId: order.event_id,
    status: order.status,
    correlationId: order.correlation_id,
    entries,
  };
}
