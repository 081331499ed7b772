import { randomUUID } from 'node:crypto';
import type { EventMove, MoveStep } from '@onsale/control-plane/db/schema/index';
import { MoverCrash, type MoverDeps, planMove, runMove } from '@onsale/control-plane/evacuation/move';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { devToken } from '../../scripts/local-platform/demo';
import { auditEvent, createOnsaleEvent, evacuateTool, keepBuying, pauseReport, testMover } from '../support/audit';
import { startTestPlatform, type TestPlatform } from '../support/platform';
import { shopper } from '../support/shopper';

/**
 * Evacuation under faults, through the real platform (router, two cells with every worker, Kafka,
 * PostgreSQL, Redis, the Stripe emulator): an abort before the switch leaves the event selling on
 * its cell as before; a mover killed at every step in turn (after the step's effects and before
 * they are recorded, then again after) and resumed each time ends with the audit clean.
 */

const HOLD_TTL = 30;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

let t: TestPlatform;
let mover: ReturnType<typeof testMover>;
let operator: string;

beforeAll(async () => {
  t = await startTestPlatform({ seatsPerEvent: 40, maxReleaseRate: 50, holdTtlSeconds: HOLD_TTL });
  mover = testMover(t);

  operator = await devToken(t.platform.urls.identity, { kind: 'operator', sub: 'sre-on-call' });
});
afterAll(async () => {
  await mover?.close();
  await t?.stop();
});

const router = () => t.platform.urls.router;

const operatorApi = (method: string, path: string, body?: unknown) =>
  fetch(`${t.platform.urls.controlPlane}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${operator}`,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });

describe('evacuation under faults', () => {
  it('abort before the switch: the event sells on its cell as before', async () => {
    const ev = t.demo.events[0]!;
    const A = ev.cellId;
    const B = t.platform.cells.map((c) => c.id).find((id) => id !== A)!;
    const seats = await t.seatsOf(ev.eventId);

    // The operator API's dry run names the move and changes nothing.
    const planned = await operatorApi('POST', '/operator/evacuation-plans', { eventId: ev.eventId, to: [B] });
    expect(planned.status).toBe(200);
    expect(await planned.json()).toMatchObject({ source: A, moves: [{ eventId: ev.eventId, fromCell: A, toCell: B }] });
    expect(
      (await operatorApi('GET', `/operator/evacuations?eventId=${ev.eventId}`).then((r) => r.json())).moves,
    ).toEqual([]);

    const early = await shopper(t.platform, ev.eventId, 'fan-abort-early');
    await early.admit();
    const before = await early.hold([seats[0]!], randomUUID());
    expect(before.status).toBe(202);
    const { orderId: earlyOrder } = (await before.json()) as { orderId: string };

    // The mover stops after copying (fenced, drained, the target loaded with the seat blocked): the last step before the flip.
    const move = await planMove(mover.deps, { eventId: ev.eventId, toCell: B, drainSeconds: 1 });
    await expect(runMove({ ...mover.deps, crashAfter: 'copied' }, move.id)).rejects.toBeInstanceOf(MoverCrash);
    const buyer = await shopper(t.platform, ev.eventId, 'fan-abort');
    await buyer.admit();
    const paused = await buyer.hold([seats[1]!], randomUUID());
    expect(paused.status).toBe(503);
    expect(((await paused.json()) as { error: { code: string } }).error.code).toBe('event_moving');

    const aborted = await operatorApi('POST', `/operator/evacuations/${move.id}/abort`);
    expect(aborted.status).toBe(200);
    expect(await aborted.json()).toMatchObject({ id: move.id, step: 'aborted' });
    // A second abort is a no-op; resume of an aborted move is refused with its reason.
    expect((await operatorApi('POST', `/operator/evacuations/${move.id}/abort`)).status).toBe(200);
    const resumed = await operatorApi('POST', `/operator/evacuations/${move.id}/resume`);
    expect(resumed.status).toBe(409);
    expect(((await resumed.json()) as { error: { details: { reason: string } } }).error.details.reason).toBe(
      'move_closed',
    );

    // The router's directory drops `moving` within a refresh; the event sells on A again, paid and ticketed there.
    for (let i = 0; i < 100 && (await t.directory()).events.find((e) => e.eventId === ev.eventId)?.moving; i++)
      await sleep(100);
    expect((await t.directory()).events.find((e) => e.eventId === ev.eventId)).toMatchObject({ cellId: A });
    let res = await buyer.hold([seats[1]!], randomUUID());
    for (let i = 0; i < 50 && res.status === 503; i++) {
      await sleep(100);
      res = await buyer.hold([seats[1]!], randomUUID());
    }
    expect(res.status).toBe(202);
    const { orderId } = (await res.json()) as { orderId: string };
    expect(await t.orderStatus(A, orderId)).toBe('pending_payment');
    expect(await t.orderStatus(B, orderId)).toBeUndefined();
    await buyer.pay(orderId, 'pm_card_visa');
    expect((await buyer.until(orderId, ['ticketed'])).tickets).toHaveLength(1);
    await early.pay(earlyOrder, 'pm_card_visa');
    await buyer.until(orderId, ['ticketed']);
    await early.until(earlyOrder, ['ticketed']);

    const audit = await auditEvent({
      eventId: ev.eventId,
      cells: t.cells(),
      ownerCell: A,
      stripeUrl: t.platform.urls.stripe,
    });
    expect(audit.violations).toEqual([]);
    expect(audit.sold).toBe(2);
    expect(audit.free).toBe(38);
  });

  it('the mover killed at every step in turn, before and after recording it, and resumed: the audit holds', async () => {
    const ev = t.demo.events[1]!;
    const from = ev.cellId;
    const to = t.platform.cells.map((c) => c.id).find((id) => id !== from)!;
    const seats = await t.seatsOf(ev.eventId);
    expect(seats.length).toBe(40);

    // In flight on the source when the move starts: one pays, one is declined, one lets the hold lapse.
    const inflight = await Promise.all(
      ['pays', 'declined', 'lapses'].map((n) => shopper(t.platform, ev.eventId, `k-${n}`)),
    );
    await Promise.all(inflight.map((s) => s.admit()));
    const orders = await Promise.all(
      inflight.map(async (s, i) => {
        const res = await s.hold(seats.slice(i * 2, i * 2 + 2), randomUUID());
        expect(res.status).toBe(202);
        const { orderId } = (await res.json()) as { orderId: string };
        return { orderId, intent: (await s.paymentForm(orderId)).paymentIntentId };
      }),
    );

    const buyers = await Promise.all(
      Array.from({ length: 4 }, (_, i) => shopper(t.platform, ev.eventId, `k-live-${i}`)),
    );
    await Promise.all(buyers.map((s) => s.admit()));
    const stop = { done: false };
    const live = buyers.map((s, i) =>
      keepBuying(router(), s, ev.eventId, seats.slice(8 + i * 8, 16 + i * 8), from, stop),
    );
    await sleep(1_500);

    const steps: MoveStep[] = ['fencing', 'fenced', 'drained', 'copied', 'flipped', 'resumed'];
    const crashes: string[] = [];
    const seen: MoveStep[] = [];
    const deps = (crash: Partial<Pick<MoverDeps, 'crashAfter' | 'crashBefore'>>): MoverDeps => ({
      ...mover.deps,
      ...crash,
      onStep: (m: EventMove) => seen.push(m.step),
    });
    const move = await planMove(mover.deps, { eventId: ev.eventId, toCell: to, drainSeconds: 2 });
    let last: EventMove | undefined;
    for (const step of steps)
      for (const crash of [{ crashBefore: step }, { crashAfter: step }]) {
        try {
          last = await runMove(deps(crash), move.id, { settleWaitMs: 300 });
        } catch (err) {
          if (!(err instanceof MoverCrash)) throw err;
          crashes.push(err.message);
        }
      }
    expect(crashes).toHaveLength(12);
    last = await runMove(deps({}), move.id, { settleWaitMs: 300 });
    expect(last.step).toBe('resumed'); // the lapsing hold is still open on the source: settling continues
    expect(seen).toEqual(steps.slice(1).filter((s) => s !== 'fencing'));

    await sleep(3_000);
    stop.done = true;
    await Promise.all(live.map((l) => l.run));
    const pause = pauseReport(
      live.map((l) => l.log),
      from,
      to,
    );
    console.log(JSON.stringify({ evacuationKilledAtEachStep: { ...pause, wrong503: pause.wrong503.length } }));
    expect(pause.wrong503).toEqual([]);

    // The source's orders finish there with nothing from the buyer but Stripe's answer.
    await inflight[0]!.confirm(orders[0]!.intent, 'pm_card_visa');
    await inflight[1]!.confirm(orders[1]!.intent, 'pm_card_chargeDeclined');
    expect(await t.untilStatus(from, orders[0]!.orderId, ['ticketed'])).toBe('ticketed');
    await t.untilStatus(from, orders[1]!.orderId, ['failed', 'expired']);
    await t.untilStatus(from, orders[2]!.orderId, ['expired'], (HOLD_TTL + 60) * 1000);

    // Killed once more while settling: before and after `done` is recorded.
    for (const crash of [{ crashBefore: 'done' as const }, { crashAfter: 'done' as const }])
      await expect(runMove(deps(crash), move.id, { settleWaitMs: 60_000 })).rejects.toBeInstanceOf(MoverCrash);
    expect((await runMove(deps({}), move.id)).step).toBe('done');

    const audit = await auditEvent({
      eventId: ev.eventId,
      cells: t.cells(),
      ownerCell: to,
      stripeUrl: t.platform.urls.stripe,
    });
    console.log(JSON.stringify({ auditAfterCrashes: { ...audit, violations: audit.violations.length } }));
    expect(audit.violations).toEqual([]);
    expect(audit.ticketedOrders).toBe(1);
    expect(audit.sold).toBe(2);
    expect(audit.free).toBe(38);
  });

  it('the source cell dead (runbooks/cell-dead-source.md): confirmed, the event sells on the target, seats the source sold or held stay blocked until it returns', async () => {
    const A = t.demo.events[0]!.cellId;
    const B = t.platform.cells.map((c) => c.id).find((id) => id !== A)!;
    const eventId = await createOnsaleEvent(t, B, 'Dead Cell Night', 20);
    const seats = await t.seatsOf(eventId);

    // Before the cell dies: one order paid and ticketed, one hold in flight (it will lapse).
    const paid = await shopper(t.platform, eventId, 'dead-paid');
    await paid.admit();
    const p = await paid.hold(seats.slice(0, 2), randomUUID());
    const { orderId: paidOrder } = (await p.json()) as { orderId: string };
    await paid.pay(paidOrder, 'pm_card_visa');
    await paid.until(paidOrder, ['ticketed']);
    const held = await shopper(t.platform, eventId, 'dead-held');
    await held.admit();
    const h = await held.hold(seats.slice(2, 4), randomUUID());
    expect(h.status).toBe(202);
    const { orderId: heldOrder } = (await h.json()) as { orderId: string };
    // The control plane knows what the cell published (the reporting projection) before it died.
    for (let i = 0; i < 200; i++) {
      const r = await mover.pool.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM reporting.orders WHERE event_id = $1 AND status IN ('held', 'ticketed')`,
        [eventId],
      );
      if (r.rows[0]!.n === 2) break;
      await sleep(250);
    }
    await t.platform.stopCell(B);

    // The normal procedure refuses a dead source; the dead-source one needs the cell id typed again.
    const refused = await evacuateTool(t, 'plan', '--event', eventId, '--to', A);
    expect(refused.stderr).toContain('error conflict (source_down)');
    const unconfirmed = await evacuateTool(t, 'plan', '--event', eventId, '--to', A, '--confirm-source-dead', 'cell-x');
    expect(unconfirmed.stderr).toContain('error validation_failed (confirmation_required)');
    const run = await evacuateTool(
      t,
      'run',
      '--event',
      eventId,
      '--to',
      A,
      '--confirm-source-dead',
      B,
      '--settle-wait-seconds',
      '2',
    );
    expect(run.stderr).toBe('');
    expect(run.stdout).toContain('(DEAD: confirmed by the operator)');
    expect(run.stdout).toContain('step resumed');
    expect((await t.directory()).events.find((e) => e.eventId === eventId)?.cellId).toBe(A);

    // On the target: what the dead cell sold or held is refused, the rest sells.
    const fan = await shopper(t.platform, eventId, 'dead-after');
    expect((await fan.admit()).purchaseCell).toBe(A);
    expect((await fan.hold(seats.slice(0, 1), randomUUID())).status).toBe(409);
    expect((await fan.hold(seats.slice(2, 3), randomUUID())).status).toBe(409);
    const ok = await fan.hold(seats.slice(10, 11), randomUUID());
    expect(ok.status).toBe(202);
    const { orderId: fanOrder } = (await ok.json()) as { orderId: string };
    await fan.pay(fanOrder, 'pm_card_visa');
    await fan.until(fanOrder, ['ticketed']);

    // The cell comes back: resume freezes it, its lapsed hold is released there and the seats come back on A.
    await t.platform.startCell(B);
    await t.untilStatus(B, heldOrder, ['expired'], (HOLD_TTL + 60) * 1000);
    const resumed = await evacuateTool(t, 'resume', '--event', eventId, '--settle-wait-seconds', '120');
    expect(resumed.stderr).toBe('');
    expect(resumed.stdout).toContain('step done');
    const status = await evacuateTool(t, 'status', '--event', eventId, '--json');
    const [move] = JSON.parse(status.stdout.slice(status.stdout.indexOf('['))) as EventMove[];
    expect(move!.report).toMatchObject({ sourceDead: true, settle: { soldInBothCells: [], released: 2 } });
    const back = await fan.hold(seats.slice(2, 3), randomUUID());
    expect(back.status).toBe(202);
    const { orderId: backOrder } = (await back.json()) as { orderId: string };
    const rel = await fetch(`${router()}/events/${eventId}/orders/${backOrder}/hold`, {
      method: 'DELETE',
      headers: { authorization: `Bearer ${fan.bearer}`, 'x-admission-token': fan.admission!.token },
    });
    expect(rel.ok).toBe(true);

    const audit = await auditEvent({ eventId, cells: t.cells(), ownerCell: A, stripeUrl: t.platform.urls.stripe });
    expect(audit.violations).toEqual([]);
    expect(audit.sold).toBe(3);
  });
});
