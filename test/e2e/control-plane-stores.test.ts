import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { auditAll } from '../support/audit';
import { ownServers } from '../support/own-servers';
import { startTestPlatform, type TestPlatform } from '../support/platform';
import { shopper } from '../support/shopper';

/**
 * The control plane's data layer lost mid-onsale (its PostgreSQL and Redis killed for 30 s) while its cells keep
 * theirs: the waiting room stops (a new buyer is told to retry shortly), admitted buyers finish their purchases in
 * the cells, and admissions come back by themselves once the stores do. The control plane's PostgreSQL and Redis are
 * this file's own (test/support/own-servers.ts), so the other end-to-end files run beside it on the shared ones; the
 * cells run on the manifest's cells' stores, as `platform up` runs them. The drills that fail a cell's stores, and
 * compare the other cell's hold latency with a baseline, are in data-layer-drills.test.ts.
 */
const own = ownServers('cp-stores', { postgres: 18532, redis: 18579 });
const services = own.services;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const report: Record<string, unknown>[] = [];

let t: TestPlatform;

beforeAll(async () => {
  await services('start', 'postgres', 'cp');
  await services('start', 'redis', 'cp');
  t = await startTestPlatform({
    topology: 'per-cell',
    seatsPerEvent: 40,
    maxReleaseRate: 50,
    servers: { postgresUrl: own.postgresUrl, redisUrl: own.redisUrl },
  });
}, 300_000);
afterAll(async () => {
  console.log(`control-plane stores lost:\n${report.map((r) => JSON.stringify(r)).join('\n')}`);
  await t?.stop();
  await own.remove();
}, 120_000);

describe("the control plane's stores lost (cells keep theirs)", () => {
  it("the control plane's PostgreSQL and Redis lost for 30 s: new buyers are told to wait, admitted buyers finish their purchases in the cells", async () => {
    const router = t.platform.urls.router;
    // Admitted before the loss, mid-onsale: one buyer per cell, holding the admission token the cells verify on
    // their own, each with a first order already paying (the router and the cells have checked tokens before).
    const admitted = await Promise.all(
      t.demo.events.map(async (e) => {
        const b = await shopper(t.platform, e.eventId, `admitted-${e.cellId}`);
        await b.admit();
        const seats = await t.seatsOf(e.eventId);
        const held = await b.hold(seats.slice(0, 2), randomUUID());
        expect(held.status).toBe(202);
        const { orderId } = (await held.json()) as { orderId: string };
        return { b, e, seats, first: { orderId, ...(await b.paymentForm(orderId)) } };
      }),
    );
    const newcomer = await shopper(t.platform, t.demo.events[0]!.eventId, 'newcomer');
    await services('kill', 'postgres', 'cp');
    await services('kill', 'redis', 'cp');
    const lostAt = Date.now();
    let healed = false;
    const heal = async () => {
      if (healed) return;
      healed = true;
      await services('start', 'postgres', 'cp');
      await services('start', 'redis', 'cp');
    };
    onTestFinished(heal);

    // What stops: the waiting room. A new buyer is told to retry shortly (503 with Retry-After), not a 500 or a hang.
    const join = await fetch(`${router}/events/${t.demo.events[0]!.eventId}/queue`, {
      method: 'POST',
      headers: { authorization: `Bearer ${newcomer.bearer}` },
    });
    const refusal = { status: join.status, code: ((await join.json()) as { error?: { code: string } }).error?.code };
    expect(refusal).toEqual({ status: 503, code: 'store_unavailable' });

    // What goes on: every admitted buyer pays the order they had open, holds more seats, pays, and gets
    // tickets for both while the control plane is away.
    const finished = await Promise.all(
      admitted.map(async ({ b, seats, first }) => {
        await b.confirm(first.paymentIntentId, 'pm_card_visa');
        const held = await b.hold(seats.slice(2, 4), randomUUID());
        expect(held.status).toBe(202);
        const { orderId } = (await held.json()) as { orderId: string };
        await b.pay(orderId, 'pm_card_visa');
        return Promise.all([b.until(first.orderId, ['ticketed']), b.until(orderId, ['ticketed'])]);
      }),
    );
    const finishedInSeconds = Math.round((Date.now() - lostAt) / 1000);
    for (const view of finished.flat()) expect(view.status).toBe('ticketed');
    await sleep(Math.max(0, 30_000 - (Date.now() - lostAt)));

    await heal();
    const backAt = Date.now();
    await newcomer.admit(120_000);
    report.push({
      drill: 'control-plane-postgres-and-redis-lost',
      newBuyerAnswer: refusal,
      admittedBuyersTicketedWithinSeconds: finishedInSeconds,
      admissionsBackInSeconds: Math.round((Date.now() - backAt) / 1000),
    });
  });

  it('the audit over both cells is clean: no seat sold twice, money exact at Stripe, every order terminal', async () => {
    for (const { eventId, audit } of await auditAll(t)) {
      expect(audit.violations, eventId).toEqual([]);
      expect(audit.ticketedOrders).toBeGreaterThan(0);
    }
  });
});
