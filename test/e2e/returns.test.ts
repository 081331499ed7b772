import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { devToken } from '../../scripts/local-platform/demo';
import { startTestPlatform, type TestPlatform } from '../support/platform';
import { shopper } from '../support/shopper';

/*
 * Returned seats, end to end through the edge router: a sold-out event's waiting room holds its
 * queue; the promoter refunds one paid order; its seats come back on sale once, the waiting room
 * admits the next buyers for them, and of two admitted buyers racing for them exactly one buys them.
 */

let t: TestPlatform;
const SEATS = 4;

beforeAll(async () => {
  t = await startTestPlatform({ seatsPerEvent: SEATS, maxReleaseRate: 50, cellCount: 1 });
}, 180_000);
afterAll(async () => {
  await t?.stop();
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function until<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 60_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe().catch(() => undefined);
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(300);
  }
}

describe('returned seats re-open a sold-out onsale', () => {
  it('a refunded order’s seats are admitted for and bought again, once', async () => {
    const router = t.platform.urls.router;
    const event = t.demo.events[0]!;
    const promoter = { authorization: `Bearer ${t.demo.promoter}` };
    const availability = async () =>
      ((await (await fetch(`${router}/events/${event.eventId}/availability`)).json()) as { availableSeatIds: string[] })
        .availableSeatIds;
    const eventStatus = async () =>
      ((await (await fetch(`${router}/events/${event.eventId}`, { headers: promoter })).json()) as { status: string })
        .status;

    // Two buyers take the whole map and pay.
    const seats = await availability();
    expect(seats).toHaveLength(SEATS);
    const first = await Promise.all([0, 1].map((i) => shopper(t.platform, event.eventId, `first-${i}`)));
    await Promise.all(first.map((b) => b.admit()));
    const firstOrders = await Promise.all(
      first.map(async (b, i) => {
        const res = await b.hold(seats.slice(i * 2, i * 2 + 2), randomUUID());
        expect(res.status).toBe(202);
        const { orderId } = (await res.json()) as { orderId: string };
        await b.pay(orderId, 'pm_card_visa');
        expect((await b.until(orderId, ['ticketed'])).tickets).toHaveLength(2);
        return orderId;
      }),
    );
    await until('the event to be sold out', async () => ((await eventStatus()) === 'sold_out' ? true : undefined));

    // Two more buyers queue; sold out, the room admits neither.
    const next = await Promise.all([0, 1].map((i) => shopper(t.platform, event.eventId, `next-${i}`)));
    const me = async (b: (typeof next)[number]) =>
      (await (
        await fetch(`${router}/events/${event.eventId}/queue/me`, { headers: { authorization: `Bearer ${b.bearer}` } })
      ).json()) as { status: string; soldOutForNow: boolean; admission: { token: string } | null };
    for (const b of next) {
      const joined = await fetch(`${router}/events/${event.eventId}/queue`, {
        method: 'POST',
        headers: { authorization: `Bearer ${b.bearer}` },
      });
      expect(joined.status).toBeLessThan(300);
    }
    await sleep(3_000);
    for (const b of next)
      expect(await me(b)).toMatchObject({ status: 'waiting', soldOutForNow: true, admission: null });

    // The promoter refunds the first order, through the edge; a repeat refunds nothing twice.
    const refund = () =>
      fetch(`${router}/events/${event.eventId}/sales/orders/${firstOrders[0]}/refund`, {
        method: 'POST',
        headers: { ...promoter, 'content-type': 'application/json' },
        body: JSON.stringify({ reason: 'the buyer cannot come' }),
      });
    const refunded = await refund();
    expect(refunded.status, await refunded.clone().text()).toBe(200);
    expect(((await refunded.json()) as { status: string }).status).toMatch(/^refund/);
    expect((await refund()).status).toBe(200);
    await first[0]!.until(firstOrders[0]!, ['refunded']);

    // Its two seats are on sale again and the room admits the queued buyers for them.
    const returned = await until('the seats to return', async () => {
      const free = await availability();
      return free.length === 2 ? free : undefined;
    });
    expect(returned.sort()).toEqual(seats.slice(0, 2).sort());
    const tokens = await Promise.all(
      next.map((b) => until('the next buyers to be admitted', async () => (await me(b)).admission?.token ?? undefined)),
    );
    // Both race for the returned seats: exactly one holds them, and buys them.
    const holds = await Promise.all(next.map((b, i) => b.hold(returned, randomUUID(), tokens[i])));
    expect(holds.map((r) => r.status).sort()).toEqual([202, 409]);
    const winner = holds.findIndex((r) => r.status === 202);
    const { orderId } = (await holds[winner]!.json()) as { orderId: string };
    await next[winner]!.pay(orderId, 'pm_card_visa');
    expect((await next[winner]!.until(orderId, ['ticketed'])).tickets).toHaveLength(2);

    // Every seat has exactly one valid ticket; the refunded order's are void.
    const db = t.cellDb(event.cellId);
    const valid = await db.query<{ seat_id: string; n: number }>(
      'SELECT seat_id, count(*)::int AS n FROM tickets WHERE voided_at IS NULL GROUP BY seat_id ORDER BY seat_id',
    );
    expect(valid.map((r) => r.n)).toEqual([1, 1, 1, 1]);
    const voided = await db.query<{ order_id: string }>('SELECT order_id FROM tickets WHERE voided_at IS NOT NULL');
    expect(voided.map((r) => r.order_id)).toEqual([firstOrders[0], firstOrders[0]]);

    // The refund is a promoter's, not a buyer's, and not another tenant's.
    const buyerTry = await fetch(`${router}/events/${event.eventId}/sales/orders/${orderId}/refund`, {
      method: 'POST',
      headers: { authorization: `Bearer ${next[winner]!.bearer}`, 'content-type': 'application/json' },
      body: JSON.stringify({ reason: 'changed my mind' }),
    });
    expect(buyerTry.status).toBe(403);
    const otherTenant = await devToken(t.platform.urls.identity, {
      kind: 'promoter',
      sub: 'someone-else',
      tenantId: randomUUID(),
      role: 'owner',
    });
    const foreign = await fetch(`${router}/events/${event.eventId}/sales/orders/${orderId}/refund`, {
      method: 'POST',
      headers: { authorization: `Bearer ${otherTenant}`, 'content-type': 'application/json' },
      body: JSON.stringify({ reason: 'not mine' }),
    });
    expect(foreign.status).toBe(404);
    const unknown = await fetch(`${router}/events/${event.eventId}/sales/orders/${randomUUID()}/refund`, {
      method: 'POST',
      headers: { ...promoter, 'content-type': 'application/json' },
      body: JSON.stringify({ reason: 'no such order' }),
    });
    expect(unknown.status).toBe(404);
    const noReason = await fetch(`${router}/events/${event.eventId}/sales/orders/${orderId}/refund`, {
      method: 'POST',
      headers: { ...promoter, 'content-type': 'application/json' },
      body: '{}',
    });
    expect(noReason.status).toBe(400);
    expect(JSON.stringify(await noReason.json())).toContain('reason');
    expect((await next[winner]!.order(orderId)).status).toBe('ticketed');
  }, 240_000);
});
