import { randomUUID } from 'node:crypto';
import { verifyTicketWithKeys } from '@onsale/cell/tickets/signing';
import type { EventMove, MoveStep } from '@onsale/control-plane/db/schema/index';
import { MoverCrash, type MoverDeps, planMove, runMove } from '@onsale/control-plane/evacuation/move';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { auditEvent, keepBuying, pauseReport, testMover } from '../support/audit';
import { startTestPlatform, type TestPlatform } from '../support/platform';
import { shopper } from '../support/shopper';

/**
 * Evacuating a live on-sale event from cell A to cell B through the real platform (router, two
 * cells with every worker, Kafka, PostgreSQL, Redis, the Stripe emulator), with buyers buying
 * throughout, the mover killed after three different steps and resumed.
 */

const HOLD_TTL = 30;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

let t: TestPlatform;
let mover: ReturnType<typeof testMover>;

beforeAll(async () => {
  t = await startTestPlatform({ seatsPerEvent: 60, maxReleaseRate: 50, holdTtlSeconds: HOLD_TTL });
  mover = testMover(t);
});
afterAll(async () => {
  await mover?.close();
  await t?.stop();
});

describe('evacuating a live on-sale event from one cell to another', () => {
  it('moves the event while buyers keep buying: in-flight orders finish on A, new holds go to B, nothing sold twice, the mover resumes after crashes', async () => {
    const ev = t.demo.events[0]!;
    const A = ev.cellId;
    const B = t.platform.cells.map((c) => c.id).find((id) => id !== A)!;
    const seats = await t.seatsOf(ev.eventId);
    expect(seats.length).toBe(60);

    // In flight on A when the move starts: one will pay, one will be declined, one lets the hold lapse.
    const inflight = await Promise.all(
      ['pays', 'declined', 'lapses'].map((n) => shopper(t.platform, ev.eventId, `fan-${n}`)),
    );
    await Promise.all(inflight.map((s) => s.admit()));
    const orders = await Promise.all(
      inflight.map(async (s, i) => {
        const res = await s.hold(seats.slice(i * 2, i * 2 + 2), randomUUID());
        expect(res.status).toBe(202);
        const { orderId } = (await res.json()) as { orderId: string };
        const { paymentIntentId } = await s.paymentForm(orderId);
        return { orderId, intent: paymentIntentId, seats: seats.slice(i * 2, i * 2 + 2) };
      }),
    );

    // Buyers who keep buying through the move (each cycles over seats of its own).
    const buyers = await Promise.all(
      Array.from({ length: 4 }, (_, i) => shopper(t.platform, ev.eventId, `fan-live-${i}`)),
    );
    await Promise.all(buyers.map((s) => s.admit()));
    const stop = { done: false };
    const live = buyers.map((s, i) =>
      keepBuying(t.platform.urls.router, s, ev.eventId, seats.slice(10 + i * 8, 18 + i * 8), A, stop),
    );
    await sleep(1_500);

    // The move, killed after three different steps and resumed each time.
    const steps: { step: MoveStep; at: number }[] = [];
    const deps = (crashAfter?: MoveStep): MoverDeps => ({
      ...mover.deps,
      crashAfter,
      onStep: (m: EventMove) => steps.push({ step: m.step, at: Date.now() }),
    });
    const moveStarted = Date.now();
    const planned = await planMove(mover.deps, { eventId: ev.eventId, toCell: B, drainSeconds: 2 });
    let crashes = 0;
    let move: EventMove | undefined;
    for (const crashAfter of ['fencing', 'drained', 'flipped', undefined] as const) {
      try {
        move = await runMove(deps(crashAfter), planned.id, { settleWaitMs: 500 });
      } catch (err) {
        if (!(err instanceof MoverCrash)) throw err;
        crashes++;
      }
    }
    expect(crashes).toBe(3);
    expect(move!.step).toBe('resumed'); // the lapsing hold is still open on A: settling continues

    // Keep buying for a while on B, then stop.
    await sleep(3_000);
    stop.done = true;
    await Promise.all(live.map((l) => l.run));

    // Every live buyer bought on A before and on B after; the pause is the gap between the two.
    const pause = pauseReport(
      live.map((l) => l.log),
      A,
      B,
    );
    for (const gap of pause.pausesMs) expect(Number.isFinite(gap)).toBe(true);
    expect(pause.wrong503).toEqual([]);
    console.log(
      JSON.stringify({
        evacuation: {
          moveMs: (steps.find((s) => s.step === 'resumed')?.at ?? Date.now()) - moveStarted,
          ...pause,
          wrong503: pause.wrong503.length,
          crashes,
        },
      }),
    );
    expect(pause.maxPauseMs).toBeLessThan(10_000);

    // Orders started on A finish on A, with no action from the buyer but Stripe's.
    await inflight[0]!.confirm(orders[0]!.intent, 'pm_card_visa');
    await inflight[1]!.confirm(orders[1]!.intent, 'pm_card_chargeDeclined');
    expect(await t.untilStatus(A, orders[0]!.orderId, ['ticketed'])).toBe('ticketed');
    // The buyer's order page, after the move, as a browser has it: the order id and the buyer's sign-in, no
    // admission token. The router follows the event's trail to A, where the order and its tickets live.
    expect((await inflight[0]!.until(orders[0]!.orderId, ['ticketed'], 5_000)).tickets).toHaveLength(2);
    // Its PDF follows the tickets by a moment (404 tickets_not_issued until then), as the page polls for it.
    const pdfUrl = `${t.platform.urls.router}/events/${ev.eventId}/orders/${orders[0]!.orderId}/tickets.pdf`;
    let pdf = await fetch(pdfUrl, { headers: { authorization: `Bearer ${inflight[0]!.bearer}` } });
    for (let i = 0; i < 60 && pdf.status === 404; i++) {
      expect(pdf.headers.get('x-error-code')).toBe('tickets_not_issued');
      await sleep(500);
      pdf = await fetch(pdfUrl, { headers: { authorization: `Bearer ${inflight[0]!.bearer}` } });
    }
    expect(pdf.status).toBe(200);
    expect(pdf.headers.get('content-type')).toContain('application/pdf');
    expect(await t.untilStatus(A, orders[1]!.orderId, ['failed', 'expired'])).toBeTruthy();
    expect(await t.untilStatus(A, orders[2]!.orderId, ['expired'], (HOLD_TTL + 60) * 1000)).toBe('expired');

    // The seats sold on A are not for sale on B; the seats A released come back on B once settled.
    const late = await shopper(t.platform, ev.eventId, 'fan-after-move');
    expect((await late.admit()).purchaseCell).toBe(B);
    const soldOnA = await late.hold(orders[0]!.seats, randomUUID());
    expect(soldOnA.status).toBe(409);
    move = await runMove(deps(), planned.id, { settleWaitMs: 60_000 });
    expect(move.step).toBe('done');
    const back = await late.hold([...orders[1]!.seats, ...orders[2]!.seats].slice(0, 4), randomUUID());
    expect(back.status).toBe(202);
    const { orderId: lateOrder } = (await back.json()) as { orderId: string };
    await late.pay(lateOrder, 'pm_card_visa');
    expect((await late.until(lateOrder, ['ticketed'])).tickets).toHaveLength(4);
    expect(await t.orderStatus(B, lateOrder)).toBe('ticketed');
    expect(await t.orderStatus(A, lateOrder)).toBeUndefined();

    // Across both cells: the audit (no seat with two tickets or two live holds, every order terminal,
    // every paid order ticketed once, captures = paid orders, sold + free = the map).
    const audit = await auditEvent({
      eventId: ev.eventId,
      cells: [A, B].map((id) => ({ id, db: t.cellDb(id) })),
      ownerCell: B,
      stripeUrl: t.platform.urls.stripe,
    });
    expect(audit.violations).toEqual([]);
    expect(audit.sold).toBe(6);
    expect(audit.ticketedOrders).toBe(2);

    // A door scanner syncs its keys through the edge, now from B: the tickets A signed before the
    // move still verify, as B's own do.
    const keys = await (await fetch(`${t.platform.urls.router}/events/${ev.eventId}/tickets/keys`)).json();
    for (const [cell, orderId] of [
      [A, orders[0]!.orderId],
      [B, lateOrder],
    ] as const) {
      const [ticket] = await t
        .cellDb(cell)
        .query<{ token: string }>('SELECT token FROM tickets WHERE order_id = $1', [orderId]);
      expect((await verifyTicketWithKeys(ticket!.token, keys)).cell).toBe(cell);
    }

    // The promoter refunds an order A sold before the move: the control plane finds it on A.
    const refund = await fetch(
      `${t.platform.urls.router}/events/${ev.eventId}/sales/orders/${orders[0]!.orderId}/refund`,
      {
        method: 'POST',
        headers: { authorization: `Bearer ${t.demo.promoter}`, 'content-type': 'application/json' },
        body: JSON.stringify({ reason: 'refund after the move' }),
      },
    );
    expect(refund.status, await refund.clone().text()).toBe(200);
    expect(await t.untilStatus(A, orders[0]!.orderId, ['refunded'])).toBe('refunded');
  });
});
