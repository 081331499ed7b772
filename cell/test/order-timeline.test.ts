import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { describe, expect } from 'vitest';
import { admittedBuyer } from '../../test/support/buyer';
import type { TestCell } from '../../test/support/cell';
import { paymentsCellTest } from '../../test/support/fixtures';
import { eventually } from '../../test/support/kafka';
import { orderStatus } from '../../test/support/saga';
import { payInBrowser } from '../../test/support/stripe';
import type { OrderTimeline } from '../src/ops/order-timeline';

const it = paymentsCellTest({ prefix: 'tl', seats: 10 });

const timelineOf = (cell: TestCell, orderId: string, token = cell.internalToken) =>
  fetch(`${cell.url}/internal/orders/${orderId}/timeline`, { headers: { authorization: `Bearer ${token}` } });

describe("an order's business timeline", () => {
  it('a ticketed purchase: hold, outbox rows, consumers, payment, webhook, tickets, in time order, no secret', async ({
    identity,
    cellId,
    cell,
    event,
    stripe,
  }) => {
    const buyer = await admittedBuyer(identity, cell, event.eventId);
    const seatIds = event.seats.slice(0, 2).map((s) => s.id);
    const held = await buyer.hold(seatIds);
    expect(held.status).toBe(202);
    const { orderId } = (await held.json()) as { orderId: string };
    const paid = await payInBrowser(stripe, () => buyer.order(orderId), 'pm_card_visa');
    await eventually(async () => (await orderStatus(cell, orderId)) === 'ticketed', 'ticketed order');
    // The last consumer records TicketIssued in the inbox just after the order is ticketed.
    await eventually(async () => {
      const rows = await cell.db.query(`SELECT 1 FROM outbox WHERE aggregate_id = $1 AND published_at IS NULL`, [
        orderId,
      ]);
      return rows.length === 0;
    }, 'every outbox row published');
    // Then the ticket worker stores the order's PDF, taking TicketIssued into its inbox: the purchase's last step.
    await eventually(async () => {
      const rows = await cell.db.query(
        `SELECT 1 FROM inbox i JOIN outbox o ON o.event_id = i.event_id
          WHERE o.aggregate_id = $1 AND o.event_type = 'TicketIssued' AND i.consumer = 'tickets'`,
        [orderId],
      );
      return rows.length > 0;
    }, 'the ticket documents stored');

    const res = await timelineOf(cell, orderId);
    expect(res.status).toBe(200);
    const timeline = (await res.json()) as OrderTimeline;
    expect(timeline).toMatchObject({ orderId, cellId, eventId: event.eventId, status: 'ticketed' });
    const { entries } = timeline;

    // Time order, and the causal order of the saga's stages.
    const times = entries.map((e) => Date.parse(e.at));
    expect(times).toEqual([...times].sort((a, b) => a - b));
    expect(entries[0]?.what).toBe('order.created');
    expect(entries[1]?.what).toBe('hold.created');
    const index = (what: string, pred: (d: Record<string, unknown>) => boolean = () => true) =>
      entries.findIndex((e) => e.what === what && pred(e.details));
    const written = entries.filter((e) => e.what === 'outbox.written').map((e) => e.details.eventType);
    const saga = [
      'HoldCreated',
      'PaymentIntentCreated',
      'PaymentAuthorized',
      'OrderConfirmed',
      'CaptureRequested',
      'PaymentCaptured',
      'TicketIssueRequested',
      'TicketIssued',
    ];
    // First occurrences: a fact may be written twice (the webhook and the worker both report it); consumers dedupe.
    expect([...new Set(written)].filter((t) => saga.includes(t as string))).toEqual(saga);
    for (const type of saga) {
      const w = index('outbox.written', (d) => d.eventType === type);
      const p = index('outbox.published', (d) => d.eventType === type);
      expect(p, `${type} published after written`).toBeGreaterThan(w);
    }
    // Who took which event in, after it was written. (Not necessarily after `outbox.published`: that is
    // when the relay marked the row, after the broker's ack, and a fast consumer may commit first.)
    const consumed = entries.filter((e) => e.what === 'inbox.consumed');
    const consumers = (type: string) =>
      consumed
        .filter((e) => e.details.eventType === type)
        .map((e) => e.details.consumer)
        .sort();
    expect(consumers('PaymentAuthorized')).toContain('saga');
    expect(consumers('CaptureRequested')).toEqual(['payments']);
    expect(consumers('TicketIssueRequested')).toEqual(['tickets']);
    expect(consumers('TicketIssued')).toEqual(['saga', 'tickets']);
    for (const c of consumed) {
      const w = index('outbox.written', (d) => d.eventId === c.details.eventId);
      expect(
        entries.indexOf(c),
        `${c.details.eventType} consumed by ${c.details.consumer} after it was written`,
      ).toBeGreaterThan(w);
    }
    // Payment, the Stripe webhook that authorized it, two tickets.
    expect(entries.find((e) => e.what === 'payment.created')?.details.paymentIntentId).toBe(paid.paymentIntentId);
    const webhook = index('stripe.webhook', (d) => d.type === 'payment_intent.amount_capturable_updated');
    expect(webhook).toBeGreaterThan(index('outbox.written', (d) => d.eventType === 'PaymentIntentCreated'));
    expect(webhook).toBeLessThan(index('outbox.written', (d) => d.eventType === 'PaymentAuthorized'));
    const tickets = entries.filter((e) => e.what === 'ticket.issued');
    expect(tickets.map((t) => t.details.seatId).sort()).toEqual([...seatIds].sort());
    expect(index('ticket.issued')).toBeGreaterThan(
      index('inbox.consumed', (d) => d.eventType === 'TicketIssueRequested'),
    );
    expect(index('order.ticketed')).toBeGreaterThan(index('ticket.issued'));

    // No secret: not the client secret, not a ticket's signed token.
    const body = JSON.stringify(timeline);
    expect(body).not.toContain(paid.clientSecret);
    expect(body).not.toMatch(/secret/i);
    const tokens = await cell.db.query<{ token: string }>('SELECT token FROM tickets WHERE order_id = $1', [orderId]);
    for (const t of tokens) expect(body).not.toContain(t.token);

    // The operator command prints the same history from the database.
    const { stdout } = await promisify(execFile)(
      'node_modules/.bin/tsx',
      ['cell/src/ops/order-timeline-main.ts', orderId, '--json'],
      {
        cwd: `${__dirname}/../..`,
        env: { ...process.env, CELL_ID: cellId, DATABASE_URL: cell.db.url },
      },
    );
    const printed = JSON.parse(stdout) as OrderTimeline;
    expect(printed.entries.map((e) => e.what)).toEqual(entries.map((e) => e.what));
  });

  it('needs the internal token; an unknown order is a 404', async ({ cell }) => {
    const unknown = '00000000-0000-4000-8000-000000000000';
    expect((await timelineOf(cell, unknown, 'wrong-token-wrong-token')).status).toBe(401);
    expect((await fetch(`${cell.url}/internal/orders/${unknown}/timeline`)).status).toBe(401);
    expect((await timelineOf(cell, unknown)).status).toBe(404);
    expect((await timelineOf(cell, 'not-a-uuid')).status).toBe(400);
    const doc = (await (await fetch(`${cell.url}/openapi.json`)).json()) as { paths: Record<string, unknown> };
    expect(doc.paths['/internal/orders/{orderId}/timeline']).toBeDefined();
  });
});
