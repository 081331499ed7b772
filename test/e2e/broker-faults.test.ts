import { randomUUID } from 'node:crypto';
import pg from 'pg';
import Stripe from 'stripe';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, signalKafka } from '../support/kafka';
import { ownServers } from '../support/own-servers';
import { startTestPlatform, type TestPlatform } from '../support/platform';
import { shopper } from '../support/shopper';

/**
 * The broker misbehaving under a live onsale on two cells, every process its own OS process:
 * frozen (SIGSTOP: connections stay open, nothing answers) for longer than the consumers'
 * session timeout, killed with -9 and restarted, and a group rebalance forced while a saga
 * handler is inside its transaction. No worker may exit; every order must end terminal, every
 * paid order be ticketed once, and Stripe must have captured exactly the paid orders. The broker
 * (every cell's and the control plane's) is this file's own, so the other files run beside it.
 */

let t: TestPlatform;
let stripe: Stripe;
const SEATS = 400;
const TERMINAL = ['ticketed', 'failed', 'expired', 'released', 'canceled', 'refunded'];
const PATIENCE_MS = 240_000;
const nextSeat = new Map<string, number>();
const broker = ownServers('broker-faults', { kafka: 18092 });

beforeAll(async () => {
  await broker.services('start', 'kafka');
  t = await startTestPlatform({
    seatsPerEvent: SEATS,
    maxReleaseRate: 100,
    servers: { kafkaBrokers: broker.kafkaBrokers },
  });
  const u = new URL(t.platform.urls.stripe);
  stripe = new Stripe(t.platform.stripeKey, {
    host: u.hostname,
    port: Number(u.port),
    protocol: 'http',
    maxNetworkRetries: 2,
  });
}, 180_000);
afterAll(async () => {
  signalKafka('SIGCONT', broker.data);
  await t?.stop();
  await broker.remove();
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Seats no earlier purchase in this file took, so every buyer's hold is accepted. */
async function freshSeats(eventId: string, n: number): Promise<string[]> {
  const res = await fetch(`${t.platform.urls.router}/events/${eventId}/availability`);
  const seats = ((await res.json()) as { availableSeatIds: string[] }).availableSeatIds;
  const from = nextSeat.get(eventId) ?? 0;
  nextSeat.set(eventId, from + n);
  return [...seats].sort().slice(from, from + n);
}

/**
 * `perEvent` buyers on each event: admitted, each holds two seats, pays (one in six with a
 * declined card) as soon as the payment worker has made the intent, and waits for the end.
 * Patient as a buyer on a payment page: a frozen broker delays them, it must not lose them.
 */
async function purchases(label: string, perEvent: number) {
  const runs = t.demo.events.flatMap((event) =>
    Array.from({ length: perEvent }, async (_, i) => {
      const buyer = await shopper(t.platform, event.eventId, `${label}-${event.cellId}-${i}`);
      await buyer.admit();
      const seats = await freshSeats(event.eventId, 2);
      const res = await buyer.hold(seats, randomUUID());
      expect(res.status).toBe(202);
      const { orderId } = (await res.json()) as { orderId: string };
      const card = i % 6 === 5 ? 'pm_card_chargeDeclined' : 'pm_card_visa';
      await buyer.pay(orderId, card, PATIENCE_MS);
      const final = await buyer.until(orderId, TERMINAL, PATIENCE_MS);
      return { cellId: event.cellId, orderId, card, status: final.status };
    }),
  );
  return Promise.all(runs);
}

/** No supervised process of a cell exited: the workers rode the fault out themselves. */
function expectNoCellProcessExited() {
  const cellProcesses = t.platform.status().filter((p) => t.platform.cells.some((c) => p.name.startsWith(`${c.id}-`)));
  expect(cellProcesses.length).toBeGreaterThanOrEqual(14);
  for (const p of cellProcesses)
    expect({ name: p.name, restarts: p.restarts, exit: p.lastExit }).toEqual({
      name: p.name,
      restarts: 0,
      exit: undefined,
    });
}

/** The ledgers and Stripe agree: terminal orders, one ticket per seat of each paid order, captures = paid orders. */
async function expectInvariants() {
  for (const cell of t.platform.cells) {
    const db = t.cellDb(cell.id);
    const open = await db.query<{ id: string; status: string }>(
      `SELECT id, status FROM orders WHERE status <> ALL($1::text[])`,
      [TERMINAL],
    );
    expect(open).toEqual([]);
    const ticketed = await db.query<{ id: string; seats: number; tickets: number; pi: string }>(`
      SELECT o.id,
             (SELECT count(*)::int FROM hold_seats hs JOIN holds h ON h.id = hs.hold_id WHERE h.order_id = o.id) AS seats,
             (SELECT count(*)::int FROM tickets tk WHERE tk.order_id = o.id) AS tickets,
             p.payment_intent_id AS pi
        FROM orders o JOIN payments p ON p.order_id = o.id WHERE o.status = 'ticketed'`);
    for (const o of ticketed) expect(o.tickets).toBe(o.seats);
    const others = await db.query<{ pi: string }>(
      `SELECT p.payment_intent_id AS pi FROM orders o JOIN payments p ON p.order_id = o.id WHERE o.status <> 'ticketed'`,
    );
    const captured = async (pi: string) => (await stripe.paymentIntents.retrieve(pi)).status === 'succeeded';
    expect((await Promise.all(ticketed.map((o) => captured(o.pi)))).every(Boolean)).toBe(true);
    expect((await Promise.all(others.map((o) => captured(o.pi)))).some(Boolean)).toBe(false);
    const [dupes] = await db.query<{ n: number }>(
      'SELECT count(*)::int AS n FROM (SELECT seat_id FROM tickets GROUP BY seat_id HAVING count(*) > 1) d',
    );
    expect(dupes!.n).toBe(0);
  }
}

describe('the broker misbehaves during a live onsale', () => {
  it('frozen with SIGSTOP for 20 s, 60 s and 20 s again while buyers hold and pay: no worker exits, nothing lost', async () => {
    for (const freezeMs of [20_000, 60_000, 20_000]) {
      const wave = purchases(`freeze${freezeMs / 1000}`, 6);
      await sleep(1_500);
      signalKafka('SIGSTOP', broker.data);
      await sleep(freezeMs);
      signalKafka('SIGCONT', broker.data);
      const results = await wave;
      for (const r of results) expect(r.status).toBe(r.card === 'pm_card_visa' ? 'ticketed' : 'failed');
    }
    expectNoCellProcessExited();
    await expectInvariants();
  }, 900_000);

  it('killed with kill -9 and restarted while buyers hold and pay: nothing lost, no worker exits', async () => {
    const wave = purchases('kill9', 6);
    await sleep(1_500);
    await broker.services('kill', 'kafka');
    await sleep(10_000);
    await broker.services('start', 'kafka');
    const results = await wave;
    for (const r of results) expect(r.status).toBe(r.card === 'pm_card_visa' ? 'ticketed' : 'failed');
    expectNoCellProcessExited();
    await expectInvariants();
  }, 600_000);

  it('a group rebalance while a saga handler is mid-transaction: the order is confirmed once and ticketed', async () => {
    const event = t.demo.events[0]!;
    const db = t.cellDb(event.cellId);
    const buyer = await shopper(t.platform, event.eventId, 'rebalance-buyer');
    await buyer.admit();
    const res = await buyer.hold(await freshSeats(event.eventId, 2), randomUUID());
    expect(res.status).toBe(202);
    const { orderId } = (await res.json()) as { orderId: string };
    const intent = await eventually(
      async () => {
        const { payment } = await buyer.order(orderId);
        return payment?.clientSecret ? payment : null;
      },
      'the payment worker to create the intent',
      60_000,
    );

    // The test holds the order's row lock, so the saga's PaymentAuthorized handler waits inside its transaction.
    const blocker = new pg.Client({ connectionString: db.url });
    await blocker.connect();
    await blocker.query('BEGIN');
    await blocker.query('SELECT id FROM orders WHERE id = $1 FOR UPDATE', [orderId]);
    let extra: { stop(): Promise<void> } | undefined;
    try {
      await buyer.confirm(intent.paymentIntentId, 'pm_card_visa');
      await eventually(
        async () =>
          (
            await db.query(
              `SELECT 1 FROM pg_stat_activity
                WHERE datname = current_database() AND application_name LIKE '%-saga' AND wait_event_type = 'Lock'`,
            )
          ).length > 0,
        'the saga handler to wait on the order lock',
        60_000,
      );
      // A second saga member joins while the first is inside its handler: the group rebalances under it.
      extra = await t.platform.addWorker(event.cellId, 'saga', 'scale-out');
      await sleep(8_000);
    } finally {
      await blocker.query('COMMIT');
      await blocker.end();
    }
    const final = await buyer.until(orderId, ['ticketed', 'failed'], 120_000);
    expect(final.status).toBe('ticketed');
    expect(final.tickets).toHaveLength(2);

    // Both members consume after the rebalance, and again after the extra one leaves.
    const during = await purchases('rebalanced', 3);
    for (const r of during) expect(r.status).toBe(r.card === 'pm_card_visa' ? 'ticketed' : 'failed');
    await extra?.stop();
    const after = await purchases('scaled-in', 3);
    for (const r of after) expect(r.status).toBe(r.card === 'pm_card_visa' ? 'ticketed' : 'failed');

    // Redelivered or replayed after the rebalance, the authorization confirmed the order once and asked for one capture.
    const effects = await db.query<{ event_type: string; n: number }>(
      `SELECT event_type, count(*)::int AS n FROM outbox
        WHERE aggregate_id = $1 AND event_type IN ('OrderConfirmed', 'CaptureRequested') GROUP BY event_type ORDER BY 1`,
      [orderId],
    );
    expect(effects).toEqual([
      { event_type: 'CaptureRequested', n: 1 },
      { event_type: 'OrderConfirmed', n: 1 },
    ]);
    expectNoCellProcessExited();
    await expectInvariants();
  }, 600_000);
});
