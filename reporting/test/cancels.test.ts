import { randomUUID } from 'node:crypto';
import { cellTopics, createLogger } from '@onsale/contracts';
import type { Emulator } from '@onsale/stripe-emulator';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { admittedBuyer } from '../../test/support/buyer';
import { startTestCell, type TestCell } from '../../test/support/cell';
import { addCell, createHarness, eventLoad, type Harness, scheduledEvent } from '../../test/support/control-plane';
import { startIdentity, type TestIdentity } from '../../test/support/identity';
import { dropCellTopics, eventually, kafkaBrokers, provisionCellTopics, uniqueCellId } from '../../test/support/kafka';
import { orderStatus } from '../../test/support/saga';
import { loadIntoCell } from '../../test/support/seed';
import {
  newWebhookSecret,
  payInBrowser,
  sendWebhooksTo,
  startStripeEmulator,
  stripeApiEnv,
  stripeClient,
} from '../../test/support/stripe';
import { startCellWorkers } from '../../test/support/workers';
import { decodeFacts } from '../src/parquet';
import { startReporter } from '../src/reporter';
import type { ObjectStore } from '../src/s3';
import { cellQuiet, reporterCaughtUp, settledObjects, testReporterConfig } from './support';

let h: Harness;
let identity: TestIdentity;
let emulator: Emulator;
let cell: TestCell;
let workers: Awaited<ReturnType<typeof startCellWorkers>>;
let cellId: string;
let eventId: string;
let seats: { id: string }[];
let tenant: Awaited<ReturnType<Harness['tenant']>>;
const prefix = `cancel-${randomUUID().slice(0, 8)}/`;
const log = createLogger({ role: 'reporting-test' }, 'error');
const reporters: Awaited<ReturnType<typeof startReporter>>[] = [];
/** Set at the cancel: the cell's next two batches die after their objects and before their offset commit. */
let crashesLeft = 0;
let crashed = 0;

const liveGroups = `reporting-cancel-${randomUUID().slice(0, 6)}`;
const config = (groupPrefix: string) =>
  testReporterConfig({ controlPlaneDatabaseUrl: h.config.DATABASE_URL_CONTROL_PLANE, prefix, groupPrefix });

let nextSeat = 0;
async function hold(n: number) {
  const buyer = await admittedBuyer(identity, cell, eventId);
  const seatIds = seats.slice(nextSeat, nextSeat + n).map((s) => s.id);
  nextSeat += n;
  // A busy cell answers 503; a client asks again with the same Idempotency-Key.
  const key = randomUUID();
  let res = await buyer.hold(seatIds, key);
  for (let tries = 0; res.status === 503 && tries < 10; tries++) {
    await new Promise((r) => setTimeout(r, 500));
    res = await buyer.hold(seatIds, key);
  }
  expect(res.status, await res.clone().text()).toBe(202);
  return { buyer, orderId: (await res.json()).orderId as string };
}

async function ticketed(n: number) {
  const o = await hold(n);
  await payInBrowser(stripeClient(emulator), () => o.buyer.order(o.orderId), 'pm_card_visa');
  await eventually(async () => (await orderStatus(cell, o.orderId)) === 'ticketed', 'ticketed', 60_000);
  return o.orderId;
}

const summary = async () => (await h.req('GET', `/events/${eventId}/sales/summary`, { token: tenant.viewer })).body;

/** The cell's ledger after the cancel: what the figures must say. */
async function ledger() {
  const [o] = await cell.db.query<{
    paid: number;
    gross: string;
    refunds: number;
    refunded: string;
    cancels: number;
    seatsRefunded: number;
  }>(
    `SELECT count(*) FILTER (WHERE p.status IN ('captured', 'refunded'))::int AS paid,
            coalesce(sum(o.amount) FILTER (WHERE p.status IN ('captured', 'refunded')), 0)::text AS gross,
            count(*) FILTER (WHERE o.status = 'refunded')::int AS refunds,
            coalesce(sum(o.amount) FILTER (WHERE o.status = 'refunded'), 0)::text AS refunded,
            count(*) FILTER (WHERE o.status = 'canceled')::int AS cancels,
            (SELECT count(*)::int FROM tickets t JOIN orders r ON r.id = t.order_id
              WHERE r.event_id = $1 AND r.status = 'refunded') AS "seatsRefunded"
       FROM orders o LEFT JOIN payments p ON p.order_id = o.id WHERE o.event_id = $1`,
    [eventId],
  );
  const [t] = await cell.db.query<{ n: number }>(
    'SELECT count(*)::int AS n FROM tickets WHERE event_id = $1 AND voided_at IS NULL',
    [eventId],
  );
  const gross = Number(o!.gross);
  const refunded = Number(o!.refunded);
  return {
    paidOrders: o!.paid,
    gross,
    refunds: o!.refunds,
    refunded,
    net: gross - refunded,
    cancels: o!.cancels,
    seatsRefunded: o!.seatsRefunded,
    seatsSold: t!.n,
  };
}

/** This tenant's projections (the shared control-plane topic brings other tests' tenants too). */
const snapshot = async () =>
  Object.fromEntries(
    await Promise.all(
      ['orders', 'minutes', 'sections', 'funnel'].map(async (t) => [
        t,
        (await h.services.pool.query(`SELECT * FROM reporting.${t} WHERE tenant_id = $1 ORDER BY 1, 2, 3`, [tenant.id]))
          .rows,
      ]),
    ),
  );

/**
 * The cell's objects: its batch plans and its facts. Not the whole prefix: it also holds the shared
 * control-plane topic's history, and the local S3 server fails a listing past 1,000 keys. Facts of
 * the control plane's (its release decisions) keep coming under the tenant: the cell's only.
 */
const cellObjects = (store: ObjectStore) => async () => {
  const lists = await Promise.all(
    [
      `${prefix}_batches/${encodeURIComponent(cellTopics(cellId).purchase)}/`,
      `${prefix}facts/tenant=${tenant.id}/`,
    ].map((p) => store.list(p)),
  );
  return lists.flat().filter((k) => k.includes('/_batches/') || k.includes(`/cell=${encodeURIComponent(cellId)}/`));
};

beforeAll(async () => {
  h = await createHarness();
  identity = await startIdentity();
  emulator = await startStripeEmulator();
  tenant = await h.tenant('Promoter cancels');
  cellId = uniqueCellId('rcx');
  // The test's cell workers publish to the services' broker, so that is the broker its entry names.
  await addCell(h, cellId, undefined, { kafkaBrokers: kafkaBrokers().join(',') });
  ({ eventId } = await scheduledEvent(h, tenant.owner, { seats: 20, cellId }));
  const webhookSecret = newWebhookSecret();
  cell = await startTestCell(identity, { cellId, env: stripeApiEnv(emulator, webhookSecret) });
  sendWebhooksTo(emulator, cell.url, webhookSecret);
  await provisionCellTopics(cellId);
  const { body } = await eventLoad(h, eventId);
  seats = body.seats;
  await loadIntoCell(cell, body);
  workers = await startCellWorkers(
    cellId,
    cell.db.url,
    { relay: true, saga: true, tickets: true, payments: true },
    undefined,
    { stripe: stripeClient(emulator) },
  );
  reporters.push(
    await startReporter(config(liveGroups), log, {
      beforeCommit: (source) => {
        if (source !== cellId || crashesLeft === 0) return;
        crashesLeft--;
        crashed++;
        throw new Error('killed between upload and offset commit');
      },
    }),
  );
});
afterAll(async () => {
  for (const r of reporters) await r.stop().catch(() => {});
  await workers?.stop();
  await cell?.close();
  if (cellId) await dropCellTopics(cellId);
  await emulator?.close();
  await identity?.close();
  await h?.close();
});

describe('sales figures after an event is cancelled', () => {
  const orders: Record<string, string> = {};

  it('refunded orders leave seatsSold and count in refunded, unpaid ones count as cancelled, equal to the ledger', async () => {
    orders.pairPaid = await ticketed(2);
    orders.singlePaid = await ticketed(1);
    const withIntent = await hold(1);
    orders.withIntent = withIntent.orderId;
    await eventually(
      async () => (await cell.db.query('SELECT 1 FROM payments WHERE order_id = $1', [orders.withIntent])).length === 1,
      'intent created',
    );
    orders.held = (await hold(3)).orderId;
    // The sales are counted before the cancel, so the cancel has sold seats to take back.
    await eventually(async () => (await summary()).seatsSold === 3 && (await summary()).holds === 4, 'sold before');
    const refundsBefore = emulator.control.counters().refunds;

    crashesLeft = 2;
    const res = await fetch(`${cell.url}/internal/events/${eventId}/sales`, {
      method: 'PUT',
      headers: { authorization: `Bearer ${cell.internalToken}`, 'content-type': 'application/json' },
      body: JSON.stringify({ status: 'canceled', reason: 'artist ill' }),
    });
    expect(res.status).toBe(200);
    for (const id of [orders.pairPaid, orders.singlePaid])
      await eventually(async () => (await orderStatus(cell, id)) === 'refunded', 'refunded', 60_000);
    expect(await orderStatus(cell, orders.withIntent)).toBe('canceled');
    expect(await orderStatus(cell, orders.held)).toBe('canceled');
    expect(emulator.control.counters().refunds - refundsBefore).toBe(2);

    const truth = await ledger();
    expect(truth).toMatchObject({ paidOrders: 2, refunds: 2, cancels: 2, seatsRefunded: 3, seatsSold: 0, net: 0 });
    const keys = Object.keys(truth) as (keyof typeof truth)[];
    const figures = await eventually(
      async () => {
        const s = await summary();
        return keys.every((k) => s[k] === truth[k]) && s;
      },
      'figures equal to the ledger',
      60_000,
    );
    expect(figures).toMatchObject({ holds: 4, expiries: 0, declines: 0, refunded: truth.gross });
    expect(crashed).toBe(2);

    // Each order's projected outcome is the cell's.
    const projected = await h.services.pool.query<{ order_id: string; status: string; refunded: string }>(
      'SELECT order_id, status, refunded::text FROM reporting.orders WHERE event_id = $1',
      [eventId],
    );
    const cellOrders = await cell.db.query<{ id: string; status: string }>(
      'SELECT id, status FROM orders WHERE event_id = $1',
      [eventId],
    );
    expect(Object.fromEntries(projected.rows.map((r) => [r.order_id, r.status]))).toEqual(
      Object.fromEntries(cellOrders.map((r) => [r.id, r.status])),
    );

    const sections = await h.req('GET', `/events/${eventId}/sales/sections`, { token: tenant.viewer });
    expect(sections.body.sections).toEqual([
      { section: 'S1', tier: 'A', capacity: 20, sold: 0, held: 0, remaining: 20 },
    ]);

    const tl = await h.req('GET', `/events/${eventId}/sales/timeline?bucket=1d`, { token: tenant.viewer });
    const sum = (k: string) => tl.body.points.reduce((n: number, p: Record<string, number>) => n + p[k]!, 0);
    expect({
      seatsSold: sum('seatsSold'),
      seatsRefunded: sum('seatsRefunded'),
      refunded: sum('refunded'),
      refunds: sum('refunds'),
      cancels: sum('cancels'),
    }).toEqual({ seatsSold: 0, seatsRefunded: 3, refunded: truth.refunded, refunds: 2, cancels: 2 });

    const csv = await h.req('GET', `/events/${eventId}/sales/settlement.csv`, { token: tenant.viewer });
    const text = typeof csv.body === 'string' ? csv.body : JSON.stringify(csv.body);
    const lines = text.trim().split('\n');
    for (const id of [orders.pairPaid, orders.singlePaid]) {
      const line = lines.find((l) => l.startsWith(id))!.split(',');
      expect([line[2], line[6] === line[5], line[7], line[8]]).toEqual(['refunded', true, '0', '0']);
    }
    expect(text).not.toContain(orders.held);
    expect(lines.at(-1)).toBe(`TOTAL,,,,eur,${truth.gross},${truth.refunded},0,0`);
  });

  it('writes the outcomes as facts: cancelled and refunded, each order once', async () => {
    const store = reporters[0]!.store;
    const date = new Date().toISOString().slice(0, 10);
    const keys = await store.list(`${prefix}facts/tenant=${tenant.id}/event=${eventId}/date=${date}/cell=${cellId}/`);
    const facts = (await Promise.all(keys.map(async (k) => decodeFacts((await store.get(k))!)))).flat();
    const kinds = (orderId: string) => [...new Set(facts.filter((f) => f.orderId === orderId).map((f) => f.kind))];
    expect(kinds(orders.pairPaid!)).toEqual(expect.arrayContaining(['held', 'paid', 'ticketed', 'refunded']));
    expect(kinds(orders.held!)).toEqual(['held', 'canceled']);
    expect(kinds(orders.withIntent!)).toEqual(['held', 'canceled']);
  });

  it('a replay from the first offset rewrites byte-identical objects and changes no figure', async () => {
    const store = reporters[0]!.store;
    await cellQuiet(cell);
    await reporterCaughtUp(liveGroups, [cellId]);
    const before = await settledObjects(store, cellObjects(store));
    const projected = await snapshot();
    const figures = await summary();
    const replayGroups = `reporting-cancel-replay-${randomUUID().slice(0, 6)}`;
    const replay = await startReporter(config(replayGroups), log);
    reporters.push(replay);
    await eventually(async () => replay.sources().includes(cellId), 'replay sources');
    await reporterCaughtUp(replayGroups, [cellId]);
    const after = await settledObjects(store, cellObjects(store));
    expect(Object.keys({ ...before, ...after }).filter((k) => before[k] !== after[k])).toEqual([]);
    expect(await snapshot()).toEqual(projected);
    expect(await summary()).toEqual(figures);
  });
});
