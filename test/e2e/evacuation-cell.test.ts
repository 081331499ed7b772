import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  auditEvent,
  controlPlaneCall,
  createOnsaleEvent,
  evacuateTool,
  keepBuying,
  pauseReport,
} from '../support/audit';
import { startTestPlatform, type TestPlatform } from '../support/platform';
import { type Shopper, shopper } from '../support/shopper';

/**
 * A whole cell evacuated with the operators' tool, exactly as the runbooks run it
 * (`pnpm --filter @onsale/control-plane evacuate ...`): three cells, three on-sale events on the
 * first, moved to the two others within their capacity while buyers buy; the tool's refusals
 * (unknown cell, target down, target full, event not on sale) with their reasons; the dry run;
 * then the cell brought back into service and one event moved back to it.
 */

let t: TestPlatform;
let A: string;
let B: string;
let C: string;
const sourceEvents: string[] = [];

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const evacuate = (...args: string[]) => evacuateTool(t, ...args);
const createEvent = (cellId: string, name: string, seats: number, onsale = true) =>
  createOnsaleEvent(t, cellId, name, seats, onsale);
const api = <T>(method: string, path: string, token: string, body?: unknown) =>
  controlPlaneCall<T>(t, method, path, token, body);

beforeAll(async () => {
  t = await startTestPlatform({ seatsPerEvent: 30, maxReleaseRate: 50, holdTtlSeconds: 30, cellCount: 3 });
  [A, B, C] = t.platform.cells.map((c) => c.id) as [string, string, string];
  sourceEvents.push(t.demo.events.find((e) => e.cellId === A)!.eventId);
  sourceEvents.push(await createEvent(A, 'Second Night', 30));
  sourceEvents.push(await createEvent(A, 'Third Night', 30));
  // Targets sized for three events each: B and C hold one already, so the three from A need both.
  for (const id of [B, C]) await api('PATCH', `/operator/cells/${id}`, t.demo.operator, { capacity: 3 });
});
afterAll(async () => {
  await t?.stop();
});

describe('evacuating a whole cell with the operators’ tool', () => {
  it('refuses clearly: unknown cell, target down, target full, event not on sale', async () => {
    const unknown = await evacuate('plan', '--cell', 'cell-nowhere');
    expect(unknown.code).not.toBe(0);
    expect(unknown.stderr).toContain('error validation_failed (unknown_cell): unknown cell cell-nowhere');

    const unknownTarget = await evacuate('plan', '--event', sourceEvents[0]!, '--to', 'cell-nowhere');
    expect(unknownTarget.stderr).toContain('(unknown_cell)');

    const unknownEvent = await evacuate('plan', '--event', randomUUID(), '--to', B);
    expect(unknownEvent.stderr).toContain('error not_found (unknown_event)');

    // Down in the registry, and registered but not answering: both are a target down.
    await api('PATCH', `/operator/cells/${C}`, t.demo.operator, { status: 'down' });
    const down = await evacuate('plan', '--event', sourceEvents[0]!, '--to', C);
    await api('PATCH', `/operator/cells/${C}`, t.demo.operator, { status: 'active' });
    expect(down.stderr).toContain(`error conflict (target_down): target cell ${C} is down`);
    await api('POST', '/operator/cells', t.demo.operator, {
      id: `ghost-${randomUUID().slice(0, 6)}`,
      baseUrl: 'http://127.0.0.1:9',
      region: 'local',
      status: 'active',
    }).then(async (ghost) => {
      const gone = await evacuate('plan', '--event', sourceEvents[0]!, '--to', (ghost as { id: string }).id);
      expect(gone.stderr).toContain('(target_down)');
      expect(gone.stderr).toContain('does not answer /readyz');
      await api('PATCH', `/operator/cells/${(ghost as { id: string }).id}`, t.demo.operator, { status: 'down' });
    });

    await api('PATCH', `/operator/cells/${B}`, t.demo.operator, { capacity: 1 });
    const full = await evacuate('plan', '--event', sourceEvents[0]!, '--to', B);
    await api('PATCH', `/operator/cells/${B}`, t.demo.operator, { capacity: 3 });
    expect(full.stderr).toContain('error conflict (target_full)');
    expect(full.stderr).toContain(`${B} 1/1`);

    const draft = await createEvent(A, 'Not On Sale', 10, false);
    const notOnSale = await evacuate('plan', '--event', draft, '--to', B);
    expect(notOnSale.stderr).toContain('error conflict (event_not_on_sale)');

    // The operator API answers the same refusals with the reason in the error body.
    const res = await fetch(`${t.platform.urls.controlPlane}/operator/evacuation-plans`, {
      method: 'POST',
      headers: { authorization: `Bearer ${t.demo.operator}`, 'content-type': 'application/json' },
      body: JSON.stringify({ cellId: 'cell-nowhere' }),
    });
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({
      error: { code: 'validation_failed', details: { reason: 'unknown_cell', issues: [{ path: 'cellId' }] } },
    });
  });

  it('moves every event of the cell to two targets within capacity while buyers buy, then the cell comes back', async () => {
    // The dry run: three moves, two to B and one to C, and nothing recorded.
    const dry = await evacuate('run', '--cell', A, '--dry-run');
    expect(dry.code).toBe(0);
    expect(dry.stdout).toContain(`plan: evacuate 3 event(s) from ${A}`);
    expect(dry.stdout).toContain(`target ${B}: 1 → 3 events of capacity 3`);
    expect(dry.stdout).toContain(`target ${C}: 1 → 2 events of capacity 3`);
    expect(dry.stdout).toContain('dry run: nothing changed');
    expect((await evacuate('status', '--cell', A)).stdout).toContain('no move');
    // The draft event made by the refusals test stays; it is not loaded, so it is placed, not evacuated.
    expect(dry.stdout).toContain('stays:');

    // On each event: a buyer whose order is in flight when the move starts, and a buyer who keeps buying.
    const pending: { s: Shopper; orderId: string; eventId: string }[] = [];
    const stop = { done: false };
    const live: ReturnType<typeof keepBuying>[] = [];
    for (const [i, eventId] of sourceEvents.entries()) {
      const seats = await t.seatsOf(eventId);
      const s = await shopper(t.platform, eventId, `cell-fan-${i}`);
      await s.admit();
      const res = await s.hold(seats.slice(0, 2), randomUUID());
      expect(res.status).toBe(202);
      pending.push({ s, orderId: ((await res.json()) as { orderId: string }).orderId, eventId });
      const b = await shopper(t.platform, eventId, `cell-live-${i}`);
      await b.admit();
      live.push(keepBuying(t.platform.urls.router, b, eventId, seats.slice(10, 20), A, stop));
    }
    await sleep(1_000);

    const running = evacuate('run', '--cell', A, '--drain-seconds', '2', '--settle-wait-seconds', '120');
    let run: Awaited<typeof running>;
    try {
      // The in-flight orders pay while their event is moving: they finish on A, and settle can end.
      await sleep(3_000);
      for (const p of pending) await p.s.pay(p.orderId, 'pm_card_visa');
      run = await running;
    } finally {
      // Buyers stop even when the run fails, so none outlives the platform.
      if (!stop.done) await sleep(2_000);
      stop.done = true;
      await Promise.allSettled(live.map((l) => l.run));
    }
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/\] (draining|settling) +\[[#.]{20}\]/);
    expect(run.stdout.match(/^step done/gm)).toHaveLength(3);
    expect(run.stdout).toContain(`cell ${A} holds no on-sale event now`);

    await Promise.all(live.map((l) => l.run));

    const dir = await t.directory();
    const placed = sourceEvents.map((id) => dir.events.find((e) => e.eventId === id)!.cellId);
    expect(placed.filter((c) => c === B)).toHaveLength(2);
    expect(placed.filter((c) => c === C)).toHaveLength(1);
    const perEvent = sourceEvents.map((_, i) => pauseReport([live[i]!.log], A, placed[i]!));
    console.log(
      JSON.stringify({
        cellEvacuation: perEvent.map((p, i) => ({
          event: i,
          to: placed[i],
          pauseMs: p.maxPauseMs,
          buyersWho503: p.buyersWho503,
          responses503: p.responses503,
          unavailable503: p.unavailable503,
          wrong503: p.wrong503.length,
        })),
      }),
    );
    for (const p of perEvent) expect(p.wrong503).toEqual([]);

    for (const [i, p] of pending.entries()) {
      // Read in A's ledger: a buyer's read without the old admission is routed to the event's new cell (runbook).
      for (let k = 0; k < 300; k++) {
        const [o] = await t.cellDb(A).query<{ status: string }>('SELECT status FROM orders WHERE id = $1', [p.orderId]);
        if (o?.status === 'ticketed') break;
        await sleep(300);
      }
      const tickets = await t.cellDb(A).query('SELECT id FROM tickets WHERE order_id = $1', [p.orderId]);
      expect(tickets).toHaveLength(2);
      const audit = await auditEvent({
        eventId: p.eventId,
        cells: t.cells(),
        ownerCell: placed[i]!,
        stripeUrl: t.platform.urls.stripe,
      });
      expect(audit.violations).toEqual([]);
      expect(audit.sold).toBe(2);
    }

    // Target full now: B holds three events of three.
    const full = await evacuate('plan', '--event', sourceEvents[2]!, '--to', B);
    if (placed[2] !== B) expect(full.stderr).toContain('(target_full)');

    // A is repaired out of service (runbooks/cell-outage.md marks it down), then brought back
    // (runbooks/cell-back-in-service.md) and one event moves home to it.
    await api('PATCH', `/operator/cells/${A}`, t.demo.operator, { status: 'down' });
    const back = await evacuate('reinstate', '--cell', A);
    expect(back.code).toBe(0);
    expect(back.stdout).toContain(`cell ${A} is active`);
    const home = sourceEvents[0]!;
    const moveBack = await evacuate(
      'run',
      '--event',
      home,
      '--to',
      A,
      '--drain-seconds',
      '1',
      '--settle-wait-seconds',
      '60',
    );
    expect(moveBack.stderr).toBe('');
    expect(moveBack.stdout).toContain('step done');
    const status = await evacuate('status', '--event', home);
    expect(status.stdout.match(/step done/g)).toHaveLength(2);

    const fan = await shopper(t.platform, home, 'fan-back-home');
    expect((await fan.admit()).purchaseCell).toBe(A);
    // Seats A sold before the evacuation stay sold at home; a free one sells there.
    const [free] = await t.cellDb(A).query<{ id: string }>(
      `SELECT s.id FROM seats s WHERE s.event_id = $1
          AND NOT EXISTS (SELECT 1 FROM hold_seats hs WHERE hs.seat_id = s.id AND hs.released_at IS NULL)
        ORDER BY s.id LIMIT 1`,
      [home],
    );
    const [sold] = await t
      .cellDb(A)
      .query<{ seat_id: string }>(
        'SELECT t.seat_id FROM tickets t JOIN seats s ON s.id = t.seat_id WHERE s.event_id = $1 LIMIT 1',
        [home],
      );
    expect((await fan.hold([sold!.seat_id], randomUUID())).status).toBe(409);
    const res = await fan.hold([free!.id], randomUUID());
    expect(res.status).toBe(202);
    const { orderId } = (await res.json()) as { orderId: string };
    await fan.pay(orderId, 'pm_card_visa');
    await fan.until(orderId, ['ticketed']);
    const audit = await auditEvent({
      eventId: home,
      cells: t.cells(),
      ownerCell: A,
      stripeUrl: t.platform.urls.stripe,
    });
    expect(audit.violations).toEqual([]);
    expect(audit.sold).toBe(3);

    // The operator API carries a move the same way: 202 with the recorded move, followed to done.
    const second = sourceEvents[1]!;
    const started = await api<{ moves: { id: string; step: string; toCell: string }[] }>(
      'POST',
      '/operator/evacuations',
      t.demo.operator,
      { eventId: second, to: [A], drainSeconds: 1 },
    );
    expect(started.moves).toMatchObject([{ toCell: A }]);
    let viaApi = started.moves[0]!;
    for (let i = 0; i < 300 && viaApi.step !== 'done'; i++) {
      await sleep(200);
      viaApi = await api('GET', `/operator/evacuations/${viaApi.id}`, t.demo.operator);
    }
    expect(viaApi.step).toBe('done');
    const listed = await api<{ moves: { id: string }[] }>('GET', `/operator/evacuations?cellId=${A}`, t.demo.operator);
    expect(listed.moves.map((m) => m.id)).toContain(viaApi.id);
    expect((await t.directory()).events.find((e) => e.eventId === second)?.cellId).toBe(A);
  });
});
