import {
  currentTraceparent,
  InMemorySpanExporter,
  initTracing,
  type ReadableSpan,
  SpanKind,
  shutdownTracing,
  withSpan,
} from '@onsale/contracts';
import { afterAll, beforeAll, describe, expect } from 'vitest';
import { admittedBuyer } from '../../test/support/buyer';
import { paymentsCellTest } from '../../test/support/fixtures';
import { eventually } from '../../test/support/kafka';
import { orderStatus } from '../../test/support/saga';
import { payInBrowser } from '../../test/support/stripe';

/**
 * One purchase is one trace: the router's forward, the cell's hold route and transaction, the
 * outbox row, the relay's publication, each consumer's handling, the Stripe calls, the webhook
 * and the ticket issuer, all in-process with the SDK's in-memory exporter.
 */
const exporter = new InMemorySpanExporter();
const it = paymentsCellTest({ prefix: 'trc', seats: 10, env: { LOG_LEVEL: 'debug' } });

// Tracing is this process's global state: on before the file's first test sets up the cell.
beforeAll(() => {
  expect(initTracing({ service: 'tracing-test', exporter, env: {} })).toBe(true);
});
afterAll(() => shutdownTracing());

const attr = (s: ReadableSpan, key: string) => s.attributes[key];
const parentId = (s: ReadableSpan) => s.parentSpanContext?.spanId;

describe('one purchase, one trace', () => {
  it('router → hold route → transaction → outbox → relay → consumers → Stripe → webhook → tickets', async ({
    identity,
    cellId,
    cell,
    event,
    stripe,
    logs,
  }) => {
    const buyer = await admittedBuyer(identity, cell, event.eventId);
    const seatIds = event.seats.slice(0, 2).map((s) => s.id);
    // The router's forward span, as the router makes it: its traceparent goes upstream as a header.
    const { res, routerSpanTrace } = await withSpan(
      'router.forward',
      { kind: SpanKind.CLIENT, parent: null },
      async () => {
        const traceparent = currentTraceparent()!;
        return {
          res: await buyer.hold(seatIds, undefined, { traceparent }),
          routerSpanTrace: traceparent.split('-')[1],
        };
      },
    );
    expect(res.status).toBe(202);
    const { orderId } = (await res.json()) as { orderId: string };
    await payInBrowser(stripe, () => buyer.order(orderId), 'pm_card_visa');
    await eventually(async () => (await orderStatus(cell, orderId)) === 'ticketed', 'ticketed order');
    const consumed = (type: string, consumer: string) => (s: ReadableSpan) =>
      s.name === `${consumer} ${type}` && attr(s, 'onsale.order_id') === orderId;
    await eventually(async () => exporter.getFinishedSpans().some(consumed('TicketIssued', 'saga')), 'last span');

    const spans = exporter.getFinishedSpans().filter((s) => s.spanContext().traceId === routerSpanTrace);
    const byId = new Map(spans.map((s) => [s.spanContext().spanId, s]));
    const one = (pred: (s: ReadableSpan) => boolean, what: string) => {
      const found = spans.filter(pred);
      expect(found.length, what).toBeGreaterThanOrEqual(1);
      return found[0]!;
    };
    const parentOf = (s: ReadableSpan) => byId.get(parentId(s) ?? '');
    /** The chain of span names from `s` up to the root of the trace. */
    const ancestry = (s: ReadableSpan) => {
      const names: string[] = [];
      for (let at: ReadableSpan | undefined = s; at; at = parentOf(at)) names.push(at.name);
      return names;
    };

    const router = one((s) => s.name === 'router.forward', 'router span');
    expect(parentId(router)).toBeUndefined();
    const route = one((s) => s.name === 'POST /events/:eventId/holds', 'hold route span');
    expect(route.kind).toBe(SpanKind.SERVER);
    expect(parentOf(route)).toBe(router);
    const holdTx = one((s) => s.name === 'cell.write_tx' && parentOf(s) === route, 'hold transaction span');

    const relayHold = one((s) => s.name === 'relay.publish HoldCreated', 'relay span of HoldCreated');
    expect(relayHold.kind).toBe(SpanKind.PRODUCER);
    expect(parentOf(relayHold)).toBe(holdTx);
    const sagaHold = one(consumed('HoldCreated', 'saga'), 'saga consumes HoldCreated');
    expect(sagaHold.kind).toBe(SpanKind.CONSUMER);
    expect(parentOf(sagaHold)).toBe(relayHold);

    // The payment worker's Stripe call is a child of its consumer span.
    const create = one((s) => s.name === 'stripe payment_intents.create', 'Stripe create span');
    expect(create.kind).toBe(SpanKind.CLIENT);
    expect(parentOf(create)?.name).toMatch(/^payments /);

    // The webhook continues the order's trace and leads to confirmation, capture and tickets.
    const webhook = one((s) => s.name === 'stripe.webhook payment_intent.amount_capturable_updated', 'webhook span');
    expect(ancestry(webhook)).toContain('payments PaymentAuthorizationRequested');
    const capture = one((s) => s.name === 'stripe payment_intents.capture', 'Stripe capture span');
    expect(ancestry(capture).some((n) => n.startsWith('stripe.webhook payment_intent.'))).toBe(true);
    const tickets = one(consumed('TicketIssueRequested', 'tickets'), 'ticket issuer span');
    const chain = ancestry(tickets);
    // PaymentCaptured comes from the capture call or from the payment_intent.succeeded webhook, whichever is first.
    expect(chain.some((n) => n.startsWith('stripe.webhook payment_intent.'))).toBe(true);
    expect(chain).toContain('payments PaymentAuthorizationRequested');
    expect(chain).toContain('relay.publish TicketIssueRequested');
    expect(chain.at(-1)).toBe('router.forward');
    expect(chain.at(-2)).toBe('POST /events/:eventId/holds');

    // Every span of the purchase is in this trace: none of the order's consumer spans started another.
    const orderSpans = exporter.getFinishedSpans().filter((s) => attr(s, 'onsale.order_id') === orderId);
    expect(orderSpans.length).toBeGreaterThan(8);
    for (const s of orderSpans) expect(s.spanContext().traceId, s.name).toBe(routerSpanTrace);

    // Log lines written inside the purchase carry its trace id, the order, and the request id where there is one.
    const applied = logs.lines
      .map((l) => JSON.parse(l))
      .filter((l) => l.msg === 'stripe event applied' && l.orderId === orderId);
    expect(applied.length).toBeGreaterThan(0);
    for (const l of applied) {
      expect(l).toMatchObject({ traceId: routerSpanTrace, cellId, role: 'cell-api' });
      expect(l.spanId).toMatch(/^[0-9a-f]{16}$/);
      expect(l.requestId).toMatch(/^[0-9a-f-]{36}$/);
    }
  });
});
