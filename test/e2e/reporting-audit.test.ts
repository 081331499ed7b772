import { randomUUID } from 'node:crypto';
import { decodeFacts } from '@onsale/reporting/parquet';
import { createObjectStore } from '@onsale/reporting/s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually } from '../support/kafka';
import { startTestPlatform, type TestPlatform } from '../support/platform';
import { serviceEnv } from '../support/services';
import { shopper } from '../support/shopper';

/**
 * The audit: two cells sell through the router with real (emulated) Stripe payments, a
 * decline and an expiry; the sales API's numbers must equal the cells' ledgers to the seat
 * and the minor unit, and every outcome must be in S3 under its partition.
 */
let t: TestPlatform;
const SEATS = 40;
type Plan = { name: string; seats: number; card: 'pm_card_visa' | 'pm_card_chargeDeclined' | null };
// Three paid (two, three and one seats), one declined, one left to expire.
const PLANS: Plan[] = [
  { name: 'pays-2', seats: 2, card: 'pm_card_visa' },
  { name: 'pays-3', seats: 3, card: 'pm_card_visa' },
  { name: 'pays-1', seats: 1, card: 'pm_card_visa' },
  { name: 'declined', seats: 2, card: 'pm_card_chargeDeclined' },
  { name: 'expires', seats: 2, card: null },
];
const placed: { eventId: string; cellId: string; orders: Record<string, string> }[] = [];

beforeAll(async () => {
  t = await startTestPlatform({ seatsPerEvent: SEATS, maxReleaseRate: 50, holdTtlSeconds: 30 });
});
afterAll(async () => {
  await t?.stop();
});

const cp = (path: string) =>
  fetch(`${t.platform.urls.controlPlane}${path}`, { headers: { authorization: `Bearer ${t.demo.promoter}` } });
const json = async (path: string) => {
  const res = await cp(path);
  expect(res.status).toBe(200);
  return res.json();
};

/** What the cell's own ledger says about one event: the truth the sales API must equal. */
async function ledger(cellId: string, eventId: string) {
  const db = t.cellDb(cellId);
  const [o] = await db.query<{
    holds: number;
    paidOrders: number;
    gross: number;
    refunded: number;
    declines: number;
    expiries: number;
    ticketed: number;
  }>(
    `SELECT count(*)::int AS holds,
            count(*) FILTER (WHERE o.status IN ('paid', 'ticketed'))::int AS "paidOrders",
            coalesce(sum(o.amount) FILTER (WHERE o.status IN ('paid', 'ticketed')), 0)::int AS gross,
            coalesce(sum(o.amount) FILTER (WHERE p.status = 'refunded'), 0)::int AS refunded,
            count(*) FILTER (WHERE p.status = 'failed')::int AS declines,
            count(*) FILTER (WHERE o.status = 'expired')::int AS expiries,
            count(*) FILTER (WHERE o.status = 'ticketed')::int AS ticketed
       FROM orders o LEFT JOIN payments p ON p.order_id = o.id WHERE o.event_id = $1`,
    [eventId],
  );
  const [tk] = await db.query<{ n: number }>('SELECT count(*)::int AS n FROM tickets WHERE event_id = $1', [eventId]);
  const sections = await db.query<{ section: string; tier: string; capacity: number; sold: number; held: number }>(
    `SELECT s.section, s.tier, count(*)::int AS capacity, count(tk.id)::int AS sold,
            count(hs.seat_id) FILTER (WHERE h.status = 'active')::int AS held
       FROM seats s
       LEFT JOIN tickets tk ON tk.seat_id = s.id
       LEFT JOIN hold_seats hs ON hs.seat_id = s.id AND hs.released_at IS NULL
       LEFT JOIN holds h ON h.id = hs.hold_id
      WHERE s.event_id = $1 GROUP BY 1, 2 ORDER BY 1, 2`,
    [eventId],
  );
  const paid = await db.query<{ id: string; amount: number }>(
    `SELECT id, amount FROM orders WHERE event_id = $1 AND status IN ('paid', 'ticketed') ORDER BY id`,
    [eventId],
  );
  const { ticketed, ...counts } = o!;
  return {
    summary: { ...counts, seatsSold: tk!.n, net: counts.gross - counts.refunded },
    ticketed,
    sections: sections.map((s) => ({ ...s, remaining: s.capacity - s.sold - s.held })),
    paid,
  };
}

/** The control plane's own record of its facts: joins and admissions per event, from its outbox. */
async function roomLedger(eventId: string) {
  const [r] = await t.controlPlaneDb.query<{ queued: number; admitted: number }>(
    `SELECT count(*) FILTER (WHERE event_type = 'QueueJoined')::int AS queued,
            coalesce(sum((envelope->'payload'->>'count')::int) FILTER (WHERE event_type = 'BuyersAdmitted'), 0)::int AS admitted
       FROM fact_outbox WHERE aggregate_id = $1`,
    [eventId],
  );
  return r!;
}

describe('reporting audit: the sales API against the cells’ ledgers, through the router', () => {
  it('two cells sell: paid, declined and expired orders end where the buyers left them', async () => {
    for (const event of t.demo.events) {
      const res = await fetch(`${t.platform.urls.router}/events/${event.eventId}/availability`);
      const free = ((await res.json()) as { availableSeatIds: string[] }).availableSeatIds;
      const buyers = await Promise.all(
        PLANS.map((p) => shopper(t.platform, event.eventId, `${p.name}-${event.cellId}`)),
      );
      await Promise.all(buyers.map((b) => b.admit()));
      let next = 0;
      const orders: Record<string, string> = {};
      for (const [i, plan] of PLANS.entries()) {
        const r = await buyers[i]!.hold(free.slice(next, next + plan.seats), randomUUID());
        next += plan.seats;
        expect(r.status).toBe(202);
        orders[plan.name] = ((await r.json()) as { orderId: string }).orderId;
      }
      await Promise.all(PLANS.map((p, i) => (p.card ? buyers[i]!.pay(orders[p.name]!, p.card) : null)));
      const finals = await Promise.all(
        PLANS.map((p, i) => buyers[i]!.until(orders[p.name]!, ['ticketed', 'failed', 'expired'], 120_000)),
      );
      expect(finals.map((f) => f.status)).toEqual(['ticketed', 'ticketed', 'ticketed', 'failed', 'expired']);
      placed.push({ eventId: event.eventId, cellId: event.cellId, orders });
    }
  });

  it('the summary and the funnel equal the ledgers, to the seat and the minor unit', async () => {
    for (const p of placed) {
      const truth = await ledger(p.cellId, p.eventId);
      const room = await roomLedger(p.eventId);
      const summary = await eventually(
        async () => {
          const s = await json(`/events/${p.eventId}/sales/summary`);
          const { funnel, eventId: _e, ...counts } = s;
          const settled =
            JSON.stringify(counts) === JSON.stringify({ ...counts, ...truth.summary }) &&
            funnel.ticketed === truth.ticketed &&
            funnel.queued === room.queued &&
            funnel.admitted === room.admitted;
          return settled && s;
        },
        `the projections of ${p.cellId}`,
        60_000,
        500,
      );
      expect(summary).toMatchObject(truth.summary);
      // The ledger's numbers are also what the buyers did: nothing counted twice or missed.
      expect(summary).toMatchObject({ holds: 5, paidOrders: 3, seatsSold: 6, declines: 1, expiries: 1 });
      expect(summary.funnel).toEqual({
        queued: room.queued,
        admitted: room.admitted,
        held: truth.summary.holds,
        paid: truth.summary.paidOrders,
        ticketed: truth.ticketed,
      });
      expect(room).toEqual({ queued: PLANS.length, admitted: PLANS.length });
    }
  });

  it('sections, timeline and the settlement export equal the ledgers', async () => {
    for (const p of placed) {
      const truth = await ledger(p.cellId, p.eventId);
      expect((await json(`/events/${p.eventId}/sales/sections`)).sections).toEqual(truth.sections);
      const timeline = await json(`/events/${p.eventId}/sales/timeline?bucket=1d`);
      const sum = (k: string) => timeline.points.reduce((n: number, x: Record<string, number>) => n + x[k]!, 0);
      expect({ gross: sum('gross'), seatsSold: sum('seatsSold'), paidOrders: sum('paidOrders') }).toEqual({
        gross: truth.summary.gross,
        seatsSold: truth.summary.seatsSold,
        paidOrders: truth.summary.paidOrders,
      });

      const csv = await (await cp(`/events/${p.eventId}/sales/settlement.csv`)).text();
      const [, ...rows] = csv.trim().split('\n');
      const total = rows.pop()!.split(',');
      const lines = rows.map((r) => r.split(','));
      expect(lines.map((l) => l[0]).sort()).toEqual(truth.paid.map((o) => o.id));
      expect(Object.fromEntries(lines.map((l) => [l[0], Number(l[5])]))).toEqual(
        Object.fromEntries(truth.paid.map((o) => [o.id, o.amount])),
      );
      expect(total.slice(5).map(Number)).toEqual([
        truth.summary.gross,
        truth.summary.refunded,
        truth.summary.net,
        truth.summary.seatsSold,
      ]);
    }
  });

  it('every paid, declined and expired order is in S3 under its tenant/event/date/cell partition', async () => {
    const env = serviceEnv();
    const store = createObjectStore({
      endpoint: env.S3_ENDPOINT,
      bucket: env.S3_BUCKET!,
      region: env.S3_REGION!,
      accessKeyId: env.S3_ACCESS_KEY_ID,
      secretAccessKey: env.S3_SECRET_ACCESS_KEY,
    });
    const date = new Date().toISOString().slice(0, 10);
    const read = async (prefix: string) => {
      const keys = await store.list(prefix);
      expect(keys.length).toBeGreaterThan(0);
      return (await Promise.all(keys.map(async (k) => decodeFacts((await store.get(k))!)))).flat();
    };
    for (const p of placed) {
      const partition = `${t.reportingPrefix}facts/tenant=${t.demo.tenantId}/event=${p.eventId}/date=${date}`;
      const facts = await read(`${partition}/cell=${p.cellId}/`);
      expect(
        facts.every((f) => f.source === p.cellId && f.tenantId === t.demo.tenantId && f.eventId === p.eventId),
      ).toBe(true);
      // The waiting room's facts sit beside the cell's, under the control plane's own partition.
      const room = await read(`${partition}/cell=control-plane/`);
      expect(room.map((f) => f.kind)).toEqual(expect.arrayContaining(['queued', 'admitted']));
      const kinds = (orderId: string) => new Set(facts.filter((f) => f.orderId === orderId).map((f) => f.kind));
      for (const name of ['pays-2', 'pays-3', 'pays-1']) {
        expect([...kinds(p.orders[name]!)]).toEqual(expect.arrayContaining(['held', 'paid', 'ticketed']));
      }
      expect([...kinds(p.orders.declined!)]).toEqual(expect.arrayContaining(['held', 'declined', 'released']));
      expect([...kinds(p.orders.expires!)]).toEqual(expect.arrayContaining(['held', 'expired']));
    }
  });
});
