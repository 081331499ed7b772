import { randomUUID } from 'node:crypto';
import { cellTopics } from '@onsale/contracts';
import { Kafka, logLevel } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { auditEvent } from '../support/audit';
import { startTestPlatform, type TestPlatform } from '../support/platform';
import { shopper } from '../support/shopper';

/**
 * Stripe down for minutes mid-onsale (the emulator's outage switch: every API call answers 500), through the router
 * with every process of a cell as `platform up` runs them, on the cell's own stores. Before this policy a
 * payment command dead-lettered after about 90 s of failures and its order never got an intent. Now (the payment
 * worker's retry budget, cell/src/payments/role.ts) nothing dead-letters, the buyers who waited pay once Stripe is
 * back, a buyer who gave up has no intent, and the audit of the cell is clean.
 *
 * The outage lasts STRIPE_OUTAGE_SECONDS (100 in CI, past the old dead-letter point; the runbook's figure is from a
 * 300 s run: `STRIPE_OUTAGE_SECONDS=300 pnpm vitest run test/e2e/stripe-outage.test.ts`).
 */
const OUTAGE_SECONDS = Number(process.env.STRIPE_OUTAGE_SECONDS ?? 100);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

let t: TestPlatform;
beforeAll(async () => {
  // Holds outlive the outage and the retries' last wait (at most a minute behind its end).
  t = await startTestPlatform({
    topology: 'per-cell',
    // One cell: the outage is the payment provider's, met by the cell whose event the buyers pay for.
    cellCount: 1,
    seatsPerEvent: 40,
    maxReleaseRate: 50,
    holdTtlSeconds: OUTAGE_SECONDS + 240,
  });
});
afterAll(async () => {
  await t?.stop();
});

async function deadLetters(brokers: string, cellId: string): Promise<number> {
  const admin = new Kafka({
    clientId: 'outage-drill',
    brokers: brokers.split(','),
    logLevel: logLevel.NOTHING,
  }).admin();
  await admin.connect();
  try {
    const offsets = await admin.fetchTopicOffsets(cellTopics(cellId).deadLetter);
    return offsets.reduce((n, p) => n + Number(p.high) - Number(p.low), 0);
  } finally {
    await admin.disconnect();
  }
}

describe(`Stripe down for ${OUTAGE_SECONDS} s mid-onsale`, () => {
  it(
    'no payment command dead-letters; the buyers who waited pay and get tickets after it; one who gave up has no intent; the audit is clean',
    async () => {
      const ev = t.demo.events[0]!;
      const cell = t.cellServices(ev.cellId);
      const stripeControl = `${t.platform.urls.stripe}/__emulator`;
      const seats = await t.seatsOf(ev.eventId);
      const buyers = await Promise.all(
        ['waits-1', 'waits-2', 'gives-up'].map((n) => shopper(t.platform, ev.eventId, n)),
      );
      await Promise.all(buyers.map((b) => b.admit()));

      const outage = await fetch(`${stripeControl}/outage`, {
        method: 'PUT',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ seconds: OUTAGE_SECONDS }),
      });
      expect(outage.status).toBe(200);
      const outageEnds = Date.now() + OUTAGE_SECONDS * 1000;
      const orders = await Promise.all(
        buyers.map(async (b, i) => {
          const res = await b.hold(seats.slice(i * 2, i * 2 + 2), randomUUID());
          expect(res.status).toBe(202);
          return ((await res.json()) as { orderId: string }).orderId;
        }),
      );

      // Mid-outage: the orders wait for their payment form (pending, no intent); the third buyer gives up.
      await sleep(Math.min(30_000, (OUTAGE_SECONDS * 1000) / 3));
      for (const [i, b] of buyers.entries()) {
        const view = await b.order(orders[i]!);
        expect(view.status).toBe('pending_payment');
        expect(view.payment?.clientSecret).toBeFalsy();
      }
      const release = await fetch(`${t.platform.urls.router}/events/${ev.eventId}/orders/${orders[2]}/hold`, {
        method: 'DELETE',
        headers: { authorization: `Bearer ${buyers[2]!.bearer}` },
      });
      expect(release.status).toBe(200);

      // After it: the payment form appears (the intent is created on a retry) and the two buyers pay.
      const paid = await Promise.all(
        [0, 1].map((i) => buyers[i]!.pay(orders[i]!, 'pm_card_visa', OUTAGE_SECONDS * 1000 + 120_000)),
      );
      const formAfterEndSeconds = Math.round((Date.now() - outageEnds) / 1000);
      for (const i of [0, 1]) expect((await buyers[i]!.until(orders[i]!, ['ticketed'])).tickets).toHaveLength(2);
      expect(paid[0]).not.toBe(paid[1]);

      const intents = (await (await fetch(`${stripeControl}/payment-intents`)).json()) as {
        data: { id: string; metadata: { orderId?: string } }[];
      };
      const intentsOf = (orderId: string) => intents.data.filter((pi) => pi.metadata.orderId === orderId);
      expect(intentsOf(orders[0]!)).toHaveLength(1);
      expect(intentsOf(orders[1]!)).toHaveLength(1);
      expect(intentsOf(orders[2]!)).toEqual([]);
      expect(await deadLetters(cell.kafkaBrokers!, ev.cellId)).toBe(0);

      const audit = await auditEvent({
        eventId: ev.eventId,
        cells: t.cells(),
        ownerCell: ev.cellId,
        stripeUrl: t.platform.urls.stripe,
      });
      expect(audit.violations).toEqual([]);
      expect(audit.ticketedOrders).toBe(2);
      console.log(
        JSON.stringify({ stripeOutage: { outageSeconds: OUTAGE_SECONDS, formAfterEndSeconds, deadLetters: 0 } }),
      );
    },
    OUTAGE_SECONDS * 1000 + 240_000,
  );
});
