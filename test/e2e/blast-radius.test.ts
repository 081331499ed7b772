import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestPlatform, type TestPlatform } from '../support/platform';
import { shopper } from '../support/shopper';

let t: TestPlatform;

beforeAll(async () => {
  t = await startTestPlatform({ seatsPerEvent: 60, maxReleaseRate: 50 });
});
afterAll(async () => {
  await t?.stop();
});

async function counters() {
  return (await (await fetch(`${t.platform.urls.stripe}/__emulator/counters`)).json()) as {
    paymentIntentsCreated: number;
    captures: number;
  };
}

describe('blast radius: one cell stops in the middle of its onsale', () => {
  it('the other cell keeps selling, the stopped one answers 503, and after a restart it finishes every paid order', async () => {
    const [a, b] = t.demo.events;
    const seatsA = await t.seatsOf(a!.eventId);
    const seatsB = await t.seatsOf(b!.eventId);

    // A buyer on cell b holds seats and has the payment form open when the cell goes down.
    const stranded = await shopper(t.platform, b!.eventId, 'fan-stranded');
    await stranded.admit();
    const held = await stranded.hold(seatsB.slice(0, 2), randomUUID());
    expect(held.status).toBe(202);
    const strandedOrder = ((await held.json()) as { orderId: string }).orderId;
    const form = await stranded.paymentForm(strandedOrder);
    const waiting = await shopper(t.platform, b!.eventId, 'fan-b-later');
    await waiting.admit();

    await t.platform.stopCell(b!.cellId);
    // The buyer pays while the cell is down: Stripe authorizes, the webhook cannot be delivered yet.
    await stranded.confirm(form.paymentIntentId, 'pm_card_visa');

    // Cell b's buyers get a fast 503 with a reason, not a hang.
    const started = Date.now();
    const refused = await waiting.hold(seatsB.slice(10, 11), randomUUID());
    expect(Date.now() - started).toBeLessThan(3_000);
    expect(refused.status).toBe(503);
    expect(refused.headers.get('retry-after')).toBeTruthy();
    expect(((await refused.json()) as { error: { code: string } }).error.code).toBe('cell_unavailable');

    // Cell a sells as if nothing happened.
    const buyersA = await Promise.all(
      Array.from({ length: 4 }, (_, i) => shopper(t.platform, a!.eventId, `fan-a-${i}`)),
    );
    await Promise.all(buyersA.map((s) => s.admit()));
    const ordersA = await Promise.all(
      buyersA.map(async (s, i) => {
        const res = await s.hold(seatsA.slice(i * 2, i * 2 + 2), randomUUID());
        expect(res.status).toBe(202);
        return ((await res.json()) as { orderId: string }).orderId;
      }),
    );
    await Promise.all(buyersA.map((s, i) => s.pay(ordersA[i]!, 'pm_card_visa')));
    for (const [i, s] of buyersA.entries()) expect((await s.until(ordersA[i]!, ['ticketed'])).tickets).toHaveLength(2);

    // Cell b comes back: the webhook Stripe kept retrying lands, and the paid order completes.
    await t.platform.startCell(b!.cellId);
    const finished = await stranded.until(strandedOrder, ['ticketed'], 120_000);
    expect(finished.tickets.map((x) => x.seatId).sort()).toEqual(seatsB.slice(0, 2).sort());
    const after = await waiting.hold(seatsB.slice(10, 11), randomUUID());
    expect(after.status).toBe(202);

    // Nothing lost or doubled: one intent and one capture per paid order, one ticket per seat.
    const c = await counters();
    expect(c.captures).toBe(5);
    for (const e of [a!, b!]) {
      const doubled = await t
        .cellDb(e.cellId)
        .query('SELECT seat_id FROM tickets GROUP BY seat_id HAVING count(*) > 1');
      expect(doubled).toEqual([]);
      const perOrder = await t
        .cellDb(e.cellId)
        .query('SELECT order_id FROM payments GROUP BY order_id HAVING count(*) > 1');
      expect(perOrder).toEqual([]);
    }
  });
});
