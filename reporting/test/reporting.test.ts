import { randomUUID } from 'node:crypto';
import { withWriteTx } from '@onsale/cell/db/tx';
import { appendEvent } from '@onsale/cell/outbox/append';
import { cellTopics, createLogger } from '@onsale/contracts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { admittedBuyer } from '../../test/support/buyer';
import { startTestCell, type TestCell } from '../../test/support/cell';
import { addCell, createHarness, eventLoad, type Harness, scheduledEvent } from '../../test/support/control-plane';
import { startIdentity, type TestIdentity } from '../../test/support/identity';
import { dropCellTopics, eventually, kafkaBrokers, provisionCellTopics, uniqueCellId } from '../../test/support/kafka';
import { envelope, inject, orderStatus, outboxEvents, recordPaymentIntent } from '../../test/support/saga';
import { loadIntoCell } from '../../test/support/seed';
import { settlementPlaces } from '../../test/support/settlement';
import { startCellWorkers, workerContext } from '../../test/support/workers';
import { decodeFacts } from '../src/parquet';
import { rebuildProjections } from '../src/rebuild';
import { startReporter } from '../src/reporter';
import type { ObjectStore } from '../src/s3';
import { cellQuiet, reporterCaughtUp, settledObjects, testReporterConfig } from './support';

let h: Harness;
let identity: TestIdentity;
const prefix = `run-${randomUUID().slice(0, 8)}/`;
const log = createLogger({ role: 'reporting-test' }, 'error');
const started: { cell: TestCell; workers: Awaited<ReturnType<typeof startCellWorkers>>; cellId: string }[] = [];
const reporters: Awaited<ReturnType<typeof startReporter>>[] = [];

const liveGroups = `reporting-live-${randomUUID().slice(0, 6)}`;
const config = (groupPrefix: string) =>
  testReporterConfig({ controlPlaneDatabaseUrl: h.config.DATABASE_URL_CONTROL_PLANE, prefix, groupPrefix });

/** A registered, running cell selling one event of the tenant (its seat map from the control plane). */
async function sellingCell(token: string, gaAreas?: { name: string; capacity: number; tier: string }[]) {
  const cellId = uniqueCellId('rep');
  // The test's cell workers publish to the services' broker, so that is the broker its entry names.
  await addCell(h, cellId, undefined, { kafkaBrokers: kafkaBrokers().join(',') });
  const { eventId } = await scheduledEvent(h, token, { seats: 20, cellId, ...(gaAreas ? { gaAreas } : {}) });
  const cell = await startTestCell(identity, { cellId });
  await provisionCellTopics(cellId);
  const { body } = await eventLoad(h, eventId);
  await loadIntoCell(cell, body);
  const workers = await startCellWorkers(cellId, cell.db.url, { relay: true, saga: true, tickets: true, expiry: true });
  started.push({ cell, workers, cellId });
  return { cellId, cell, workers, eventId, seats: body.seats, gaAreas: body.gaAreas ?? [] };
}
type Selling = Awaited<ReturnType<typeof sellingCell>>;

/** What the payment worker writes when Stripe reports a capture or a decline: through the cell's outbox. */
async function paymentOutcome(s: Selling, orderId: string, outcome: 'PaymentCaptured' | 'PaymentFailed') {
  const amount = await orderAmount(s, orderId);
  const ctx = workerContext(s.cellId, s.cell.db.url, 'payments');
  const paymentIntentId = `pi_test_${orderId.slice(0, 8)}`;
  await withWriteTx(ctx, async (tx) => {
    await (outcome === 'PaymentCaptured'
      ? appendEvent(tx, { cellId: s.cellId, correlationId: orderId, causationId: null }, outcome, orderId, {
          orderId,
          paymentIntentId,
          amount,
        })
      : appendEvent(tx, { cellId: s.cellId, correlationId: orderId, causationId: null }, outcome, orderId, {
          orderId,
          paymentIntentId,
          reason: 'card_declined',
        }));
  });
  await ctx.database.close();
}

const orderAmount = async (s: Selling, orderId: string) =>
  Number((await s.cell.db.query('SELECT amount FROM orders WHERE id = $1', [orderId]))[0]!.amount);

/** A hold of these seats and, when `ga` is given, that many places of the event's first GA area. */
async function hold(s: Selling, seatIndexes: number[], ga?: number) {
  const buyer = await admittedBuyer(identity, s.cell, s.eventId);
  const seatIds = seatIndexes.map((i) => s.seats[i]!.id);
  const res = await buyer.holdRaw(
    JSON.stringify({ seatIds, ...(ga ? { ga: [{ areaId: s.gaAreas[0]!.id, quantity: ga }] } : {}) }),
  );
  expect(res.ok).toBe(true);
  return (await res.json()).orderId as string;
}

async function paidOrder(s: Selling, seatIndexes: number[], ga?: number) {
  const orderId = await hold(s, seatIndexes, ga);
  await eventually(
    async () => (await outboxEvents(s.cell, orderId)).some((e) => e.event_type === 'PaymentAuthorizationRequested'),
    'authorization request',
  );
  const amount = await orderAmount(s, orderId);
  const paymentIntentId = await recordPaymentIntent(s.cell, orderId, amount);
  // A redelivered authorization is a no-op (the saga's inbox), so it is sent again until the
  // saga's consumer, which may still be joining its group, has taken it.
  const authorized = envelope(s.cellId, 'PaymentAuthorized', orderId, { orderId, paymentIntentId, amount });
  await eventually(
    async () => {
      if ((await orderStatus(s.cell, orderId)) === 'confirmed') return true;
      await inject(s.workers.broker, s.cellId, authorized);
      await new Promise((r) => setTimeout(r, 1_000));
      return (await orderStatus(s.cell, orderId)) === 'confirmed';
    },
    'confirmed',
    60_000,
  );
  await paymentOutcome(s, orderId, 'PaymentCaptured');
  await eventually(async () => (await orderStatus(s.cell, orderId)) === 'ticketed', 'ticketed');
  return orderId;
}

/** The cell's ledger, the truth the projections must equal. */
async function ledger(s: Selling) {
  const [o] = await s.cell.db.query<{ paid: number; gross: string; expired: number }>(
    `SELECT count(*) FILTER (WHERE status IN ('paid', 'ticketed'))::int AS paid,
            coalesce(sum(amount) FILTER (WHERE status IN ('paid', 'ticketed')), 0)::text AS gross,
            count(*) FILTER (WHERE status = 'expired')::int AS expired
       FROM orders WHERE event_id = $1`,
    [s.eventId],
  );
  const [t] = await s.cell.db.query<{ n: number }>('SELECT count(*)::int AS n FROM tickets WHERE event_id = $1', [
    s.eventId,
  ]);
  return { paidOrders: o!.paid, gross: Number(o!.gross), expiries: o!.expired, seatsSold: t!.n };
}

/** The two tenants' projections: the shared control-plane topic brings other tests' tenants, still joining. */
const snapshot = async () =>
  Object.fromEntries(
    await Promise.all(
      ['orders', 'minutes', 'sections', 'funnel'].map(async (t) => [
        t,
        (
          await h.services.pool.query(`SELECT * FROM reporting.${t} WHERE tenant_id = ANY($1) ORDER BY 1, 2, 3`, [
            [tenantA.id, tenantB.id],
          ])
        ).rows,
      ]),
    ),
  );

/**
 * This file's objects: its two tenants' facts and its two cells' batch plans. The control plane's facts topic is the
 * whole suite's: a consumer starting from its first offset reads every earlier file's history, and files beside this
 * one add other tenants' facts (and plans cutting them) while it runs.
 */
const ownPrefixes = () => [
  ...[tenantA.id, tenantB.id].map((t) => `${prefix}facts/tenant=${t}/`),
  ...[a.cellId, b.cellId].map((c) => `${prefix}_batches/${encodeURIComponent(cellTopics(c).purchase)}/`),
];
const ownObjects = (store: ObjectStore) => async () =>
  (await Promise.all(ownPrefixes().map((p) => store.list(p)))).flat();

let a: Selling;
let b: Selling;
let tenantA: Awaited<ReturnType<Harness['tenant']>>;
let tenantB: Awaited<ReturnType<Harness['tenant']>>;
const orders: Record<string, string> = {};
let crashes = 0;

beforeAll(async () => {
  h = await createHarness();
  identity = await startIdentity();
  tenantA = await h.tenant('Promoter A');
  tenantB = await h.tenant('Promoter B');
  a = await sellingCell(tenantA.owner);
  // A registered cell that never came up: its topic does not exist.
  await addCell(h, uniqueCellId('down'), undefined, { kafkaBrokers: kafkaBrokers().join(',') });
  reporters.push(
    await startReporter(config(liveGroups), log, {
      beforeCommit: () => {
        // The first batch dies after its objects are durable and before its offsets are committed.
        if (crashes++ === 0) throw new Error('killed between upload and offset commit');
      },
    }),
  );
});
afterAll(async () => {
  for (const r of reporters) await r.stop().catch(() => {});
  for (const s of started) {
    await s.workers.stop();
    await s.cell.close();
    await dropCellTopics(s.cellId);
  }
  await identity?.close();
  await h?.close();
});

describe('cross-cell reporting', () => {
  it('projects paid, declined and expired orders of two cells, one registered while running, equal to their ledgers', async () => {
    orders.paidA = await paidOrder(a, [0, 1]);
    orders.declinedA = await hold(a, [2]);
    await paymentOutcome(a, orders.declinedA, 'PaymentFailed');
    orders.expiredA = await hold(a, [3, 4]);
    await a.cell.db.query(`UPDATE holds SET expires_at = now() - interval '1 second' WHERE order_id = $1`, [
      orders.expiredA,
    ]);
    await eventually(async () => (await orderStatus(a.cell, orders.expiredA!)) === 'expired', 'expiry');

    // B's event has a GA area beside its seats: each figure counts places, its 2 + 1 GA places included.
    b = await sellingCell(tenantB.owner, [{ name: 'Floor', capacity: 100, tier: 'A' }]);
    orders.paidB = await paidOrder(b, [5, 6, 7]);
    orders.gaB = await paidOrder(b, [], 2);
    orders.mixedB = await paidOrder(b, [8], 1);

    for (const [s, t] of [
      [a, tenantA],
      [b, tenantB],
    ] as const) {
      const truth = await ledger(s);
      const summary = await eventually(async () => {
        const r = await h.req('GET', `/events/${s.eventId}/sales/summary`, { token: t.viewer });
        const { paidOrders, seatsSold, gross, expiries } = r.body;
        return JSON.stringify({ paidOrders, gross, expiries, seatsSold }) === JSON.stringify(truth) && r.body;
      }, `projections of ${s.cellId}`);
      expect(summary.funnel.held).toBeGreaterThan(0);
    }
    const sumA = (await h.req('GET', `/events/${a.eventId}/sales/summary`, { token: tenantA.viewer })).body;
    expect(sumA).toMatchObject({ paidOrders: 1, seatsSold: 2, gross: 15_000, declines: 1, expiries: 1, holds: 3 });
    const sumB = (await h.req('GET', `/events/${b.eventId}/sales/summary`, { token: tenantB.viewer })).body;
    expect(sumB).toMatchObject({ paidOrders: 3, seatsSold: 7, gross: 7 * 7_500, holds: 3 });
    expect(crashes).toBeGreaterThan(1);
  });

  it('writes every outcome under its tenant/event/date/cell partition as Parquet', async () => {
    const store = reporters[0]!.store;
    const date = new Date().toISOString().slice(0, 10);
    const keys = await store.list(
      `${prefix}facts/tenant=${tenantA.id}/event=${a.eventId}/date=${date}/cell=${a.cellId}/`,
    );
    const facts = (await Promise.all(keys.map(async (k) => decodeFacts((await store.get(k))!)))).flat();
    const kinds = (orderId: string) => facts.filter((f) => f.orderId === orderId).map((f) => f.kind);
    expect(kinds(orders.paidA!)).toEqual(expect.arrayContaining(['held', 'paid', 'ticketed']));
    expect(kinds(orders.declinedA!)).toEqual(expect.arrayContaining(['held', 'declined']));
    expect(kinds(orders.expiredA!)).toEqual(expect.arrayContaining(['held', 'expired']));
    expect(facts.every((f) => f.tenantId === tenantA.id && f.source === a.cellId)).toBe(true);
  });

  it('a replay from the first offset rewrites byte-identical objects and changes no projection', async () => {
    const store = reporters[0]!.store;
    for (const s of started) await cellQuiet(s.cell);
    await reporterCaughtUp(liveGroups, [a.cellId, b.cellId]);
    const before = await settledObjects(store, ownObjects(store));
    for (const p of ownPrefixes())
      expect(
        Object.keys(before).some((k) => k.startsWith(p)),
        p,
      ).toBe(true);
    const projected = await snapshot();
    const replayGroups = `reporting-replay-${randomUUID().slice(0, 6)}`;
    const replay = await startReporter(config(replayGroups), log);
    reporters.push(replay);
    await eventually(async () => [a.cellId, b.cellId].every((c) => replay.sources().includes(c)), 'replay sources');
    // Once the replay has committed the end of both topics, its objects must all be the live ones.
    await reporterCaughtUp(replayGroups, [a.cellId, b.cellId]);
    const after = await settledObjects(store, ownObjects(store));
    const changed = Object.keys({ ...before, ...after }).filter((k) => before[k] !== after[k]);
    expect(changed).toEqual([]);
    expect(await snapshot()).toEqual(projected);
  });

  it('a rebuild from S3 alone gives the live numbers', async () => {
    const live = await snapshot();
    const facts = await rebuildProjections(h.services.pool, reporters[0]!.store, prefix);
    expect(facts).toBeGreaterThan(0);
    expect(await snapshot()).toEqual(live);
  });

  it('sales routes: tenant isolation, sections, timeline buckets, settlement CSV, 400 naming the parameter', async () => {
    const other = await h.req('GET', `/events/${a.eventId}/sales/summary`, { token: tenantB.viewer });
    expect(other.status).toBe(404);
    for (const path of ['timeline', 'sections', 'settlement.csv']) {
      expect((await h.req('GET', `/events/${a.eventId}/sales/${path}`, { token: tenantB.viewer })).status).toBe(404);
    }
    const bad = await h.req('GET', `/events/${a.eventId}/sales/timeline?bucket=2m`, { token: tenantA.viewer });
    expect(bad.status).toBe(400);
    expect(JSON.stringify(bad.body.error.details)).toContain('bucket');
    const badFrom = await h.req('GET', `/events/${a.eventId}/sales/timeline?from=yesterday`, { token: tenantA.viewer });
    expect(badFrom.status).toBe(400);
    expect(JSON.stringify(badFrom.body.error.details)).toContain('from');

    const tl = await h.req('GET', `/events/${a.eventId}/sales/timeline?bucket=1h`, { token: tenantA.viewer });
    expect(tl.status).toBe(200);
    expect(tl.body.points.reduce((n: number, p: { gross: number }) => n + p.gross, 0)).toBe(15_000);

    const sections = await h.req('GET', `/events/${a.eventId}/sales/sections`, { token: tenantA.viewer });
    expect(sections.body.sections).toEqual([
      { section: 'S1', tier: 'A', capacity: 20, sold: 2, held: 0, remaining: 18 },
    ]);

    const csv = await h.req('GET', `/events/${a.eventId}/sales/settlement.csv`, { token: tenantA.viewer });
    expect(csv.status).toBe(200);
    expect(csv.headers.get('content-type')).toContain('text/csv');
    const text = typeof csv.body === 'string' ? csv.body : JSON.stringify(csv.body);
    expect(text).toContain(orders.paidA);
    expect(text).not.toContain(orders.declinedA);
    expect(text).toContain('TOTAL,,,,eur,15000,0,15000,2');

    // B's GA area is a section of its own, and its places count in the settlement, alone or beside a seat.
    const sectionsB = await h.req('GET', `/events/${b.eventId}/sales/sections`, { token: tenantB.viewer });
    expect(sectionsB.body.sections).toEqual([
      { section: 'Floor', tier: 'A', capacity: 100, sold: 3, held: 0, remaining: 97 },
      { section: 'S1', tier: 'A', capacity: 20, sold: 4, held: 0, remaining: 16 },
    ]);
    const csvB = await h.req('GET', `/events/${b.eventId}/sales/settlement.csv`, { token: tenantB.viewer });
    const { places: placesOf, total } = settlementPlaces(String(csvB.body));
    expect([placesOf(orders.paidB!), placesOf(orders.gaB!), placesOf(orders.mixedB!)]).toEqual(['3', '2', '2']);
    expect(total).toBe('TOTAL,,,,eur,52500,0,52500,7');
  });
});
