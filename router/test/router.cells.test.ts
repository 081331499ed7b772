import { randomUUID } from 'node:crypto';
import type { EventLoad } from '@onsale/contracts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestCell, type TestCell } from '../../test/support/cell';
import { startIdentity, type TestIdentity } from '../../test/support/identity';
import { eventLoad, loadIntoCell } from '../../test/support/seed';
import type { RunningRouter } from '../src/router';
import { type FakeControlPlane, metricValue, routerFor, routerMetricsText, startFakeControlPlane } from './fakes';

/** Two real cells (each its own database) behind the router, with a fake control plane serving the directory. */
let identity: TestIdentity;
let cellA: TestCell;
let cellB: TestCell;
let controlPlane: FakeControlPlane;
let router: RunningRouter;
let eventA: EventLoad;
let eventB: EventLoad;

beforeAll(async () => {
  identity = await startIdentity();
  [cellA, cellB] = await Promise.all([
    startTestCell(identity, { cellId: 'cell-a' }),
    startTestCell(identity, { cellId: 'cell-b' }),
  ]);
  eventA = await loadIntoCell(cellA, eventLoad(40));
  eventB = await loadIntoCell(cellB, eventLoad(40));
  controlPlane = await startFakeControlPlane();
  controlPlane.addCell('cell-a', cellA.url);
  controlPlane.addCell('cell-b', cellB.url);
  controlPlane.placeEvent(eventA.eventId, 'cell-a');
  controlPlane.placeEvent(eventB.eventId, 'cell-b');
  router = await routerFor(controlPlane, identity.admissionJwksUrl);
});

afterAll(async () => {
  await router?.close();
  await controlPlane?.close();
  await Promise.all([cellA?.close(), cellB?.close()]);
  await identity?.close();
});

/** A buyer who talks to the router only: buyer JWT, admission token minted for `purchaseCell`. */
async function buyerVia(eventId: string, purchaseCell: string, directoryEpoch = 1) {
  const userId = `buyer-${randomUUID()}`;
  const bearer = await identity.buyerToken(userId);
  const admission = await identity.admissionToken({ sub: userId, eventId, purchaseCell, directoryEpoch });
  return {
    userId,
    hold: (seatIds: string[], extra: Record<string, string> = {}) =>
      fetch(`${router.url}/events/${eventId}/holds`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${bearer}`,
          'x-admission-token': admission,
          'idempotency-key': randomUUID(),
          'content-type': 'application/json',
          ...extra,
        },
        body: JSON.stringify({ seatIds }),
      }),
    order: (orderId: string) =>
      fetch(`${router.url}/events/${eventId}/orders/${orderId}`, { headers: { authorization: `Bearer ${bearer}` } }),
  };
}

const ordersOf = (cell: TestCell, userId: string) =>
  cell.db.query<{ id: string; correlation_id: string }>('SELECT id, correlation_id FROM orders WHERE user_id = $1', [
    userId,
  ]);

async function setStatus(cellId: string, status: 'active' | 'draining' | 'down') {
  controlPlane.setStatus(cellId, status);
  await router.refreshDirectory();
}

describe('routing to real cells', () => {
  it('a hold with a token for cell-a lands in cell-a, with the correlation id, and nowhere else', async () => {
    const buyer = await buyerVia(eventA.eventId, 'cell-a');
    const res = await buyer.hold([eventA.seats[0]!.id, eventA.seats[1]!.id], { 'x-correlation-id': 'corr-hold-1' });
    expect(res.status).toBe(202);
    expect(res.headers.get('x-correlation-id')).toBe('corr-hold-1');
    const { orderId } = (await res.json()) as { orderId: string };

    expect(await ordersOf(cellA, buyer.userId)).toEqual([{ id: orderId, correlation_id: 'corr-hold-1' }]);
    expect(await ordersOf(cellB, buyer.userId)).toEqual([]);
  });

  it('an order read without an admission token is routed by the directory', async () => {
    const buyer = await buyerVia(eventA.eventId, 'cell-a');
    const { orderId } = (await (await buyer.hold([eventA.seats[2]!.id])).json()) as { orderId: string };

    const res = await buyer.order(orderId);
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ orderId, eventId: eventA.eventId });
  });

  it("refuses a token for cell-a presented for cell-b's event, and writes nothing in either cell", async () => {
    const buyer = await buyerVia(eventB.eventId, 'cell-a');
    const res = await buyer.hold([eventB.seats[0]!.id]);
    expect(res.status).toBe(403);
    expect(await res.json()).toMatchObject({ error: { code: 'admission_invalid', details: { reason: 'stale_cell' } } });

    // The same token's event presented on another event's path is refused too.
    const crossed = await fetch(`${router.url}/events/${eventA.eventId}/holds`, {
      method: 'POST',
      headers: {
        'x-admission-token': await identity.admissionToken({
          sub: buyer.userId,
          eventId: eventB.eventId,
          purchaseCell: 'cell-b',
        }),
        'content-type': 'application/json',
      },
      body: JSON.stringify({ seatIds: [eventA.seats[3]!.id] }),
    });
    expect(crossed.status).toBe(403);
    expect(await crossed.json()).toMatchObject({ error: { code: 'admission_invalid', details: { reason: 'event' } } });

    expect(await ordersOf(cellA, buyer.userId)).toEqual([]);
    expect(await ordersOf(cellB, buyer.userId)).toEqual([]);
    const held = await cellB.db.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM holds WHERE event_id = $1 AND status = 'active'`,
      [eventB.eventId],
    );
    expect(held[0]!.n).toBe(0);
  });

  it('refuses a forged admission token with the error body before any cell sees it', async () => {
    const userId = `buyer-${randomUUID()}`;
    const res = await fetch(`${router.url}/events/${eventA.eventId}/holds`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${await identity.buyerToken(userId)}`,
        'x-admission-token': await identity.forgedAdmissionToken({
          sub: userId,
          eventId: eventA.eventId,
          purchaseCell: 'cell-a',
        }),
        'idempotency-key': randomUUID(),
        'content-type': 'application/json',
      },
      body: JSON.stringify({ seatIds: [eventA.seats[4]!.id] }),
    });
    expect(res.status).toBe(403);
    const body = (await res.json()) as { error: { code: string; requestId: string } };
    expect(body.error.code).toBe('admission_invalid');
    expect(body.error.requestId).toBe(res.headers.get('x-request-id'));
    expect(await ordersOf(cellA, userId)).toEqual([]);
  });

  it('an event the directory does not know is event_not_found', async () => {
    const res = await fetch(`${router.url}/events/${randomUUID()}/availability`);
    expect(res.status).toBe(404);
    expect(await res.json()).toMatchObject({ error: { code: 'event_not_found' } });
  });

  it.each(['draining', 'down'] as const)('a %s cell answers 503 while the other cell sells', async (status) => {
    await setStatus('cell-b', status);
    try {
      const refused = await fetch(`${router.url}/events/${eventB.eventId}/availability`);
      expect(refused.status).toBe(503);
      expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
      expect(await refused.json()).toMatchObject({
        error: { code: 'cell_unavailable', details: { cellId: 'cell-b', status } },
      });
      const tokenHold = await (await buyerVia(eventB.eventId, 'cell-b')).hold([eventB.seats[5]!.id]);
      expect(tokenHold.status).toBe(503);

      const buyer = await buyerVia(eventA.eventId, 'cell-a');
      const seat = status === 'draining' ? 10 : 11;
      expect((await buyer.hold([eventA.seats[seat]!.id])).status).toBe(202);
      expect((await fetch(`${router.url}/events/${eventA.eventId}/availability`)).status).toBe(200);
    } finally {
      await setStatus('cell-b', 'active');
    }
    expect((await fetch(`${router.url}/events/${eventB.eventId}/availability`)).status).toBe(200);
  });

  it('a cell process that stops answering gets 503 quickly, and the other cell is untouched', async () => {
    const cellC = await startTestCell(identity, { cellId: 'cell-c' });
    const eventC = await loadIntoCell(cellC, eventLoad(5));
    controlPlane.addCell('cell-c', cellC.url);
    controlPlane.placeEvent(eventC.eventId, 'cell-c');
    await router.refreshDirectory();
    // A first request leaves a pooled keep-alive connection behind, as live traffic would.
    expect((await fetch(`${router.url}/events/${eventC.eventId}/availability`)).status).toBe(200);

    await cellC.close();
    const started = performance.now();
    const res = await fetch(`${router.url}/events/${eventC.eventId}/availability`, {
      signal: AbortSignal.timeout(5_000),
    });
    const elapsed = performance.now() - started;
    expect(res.status).toBe(503);
    expect(res.headers.get('retry-after')).toBeTruthy();
    expect(await res.json()).toMatchObject({
      error: { code: 'cell_unavailable', details: { cellId: 'cell-c', status: 'unreachable' } },
    });
    expect(elapsed).toBeLessThan(1_000);
    expect((await fetch(`${router.url}/events/${eventA.eventId}/availability`)).status).toBe(200);
    expect(await metricValue(router, 'router_upstream_errors_total{cell="cell-c",reason="unreachable"}')).toBe(1);
  });

  it('counts requests per cell and status class', async () => {
    const before = await metricValue(router, 'router_requests_total{cell="cell-a",class="2xx"}');
    for (let i = 0; i < 3; i++) await fetch(`${router.url}/events/${eventA.eventId}/availability`);
    await fetch(`${router.url}/events/${eventB.eventId}/availability`);

    expect(await metricValue(router, 'router_requests_total{cell="cell-a",class="2xx"}')).toBe(before + 3);
    expect(await metricValue(router, 'router_requests_total{cell="cell-b",class="2xx"}')).toBeGreaterThan(0);
    // The draining and down refusals of cell-b were counted against cell-b.
    expect(await metricValue(router, 'router_requests_total{cell="cell-b",class="5xx"}')).toBe(4);
    const text = await routerMetricsText(router);
    expect(text).toMatch(/router_request_duration_seconds_bucket\{le="0.1",cell="cell-a"\} \d+/);
    expect(text).toMatch(/router_directory_version \d+/);
    expect(text).toMatch(/router_directory_age_seconds [\d.e+-]+\n/);
  });
});

describe('an order stays reachable where it lives, after its event moved', () => {
  it('reads, the tickets and releasing a hold follow the trail to the old cell without an admission token; an unknown order is 404; a down cell on the trail is 503', async () => {
    const moved = await loadIntoCell(cellA, eventLoad(10));
    await loadIntoCell(cellB, moved);
    controlPlane.placeEvent(moved.eventId, 'cell-a', 1);
    await router.refreshDirectory();
    const buyer = await buyerVia(moved.eventId, 'cell-a');
    const kept = (await (await buyer.hold([moved.seats[0]!.id])).json()) as { orderId: string };
    const released = (await (await buyer.hold([moved.seats[1]!.id])).json()) as { orderId: string };

    // The event moves to cell-b: its directory entry names cell-a as where it sold before.
    controlPlane.placeEvent(moved.eventId, 'cell-b', 2, ['cell-a']);
    await router.refreshDirectory();
    const res = await buyer.order(kept.orderId);
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ orderId: kept.orderId, eventId: moved.eventId });
    const release = await fetch(`${router.url}/events/${moved.eventId}/orders/${released.orderId}/hold`, {
      method: 'DELETE',
      headers: { authorization: `Bearer ${await identity.buyerToken(buyer.userId)}` },
    });
    expect(release.status).toBe(200);
    const [row] = await cellA.db.query<{ status: string }>('SELECT status FROM orders WHERE id = $1', [
      released.orderId,
    ]);
    expect(row?.status).toBe('released');

    // An order neither cell has: the last cell's own 404, in the platform's error body.
    const missing = await buyer.order(randomUUID());
    expect(missing.status).toBe(404);
    expect(((await missing.json()) as { error: { code: string } }).error.code).toBe('not_found');

    // The old cell down: the order may be there, so the buyer is told to come back, not that it is gone.
    await setStatus('cell-a', 'down');
    const down = await buyer.order(kept.orderId);
    expect(down.status).toBe(503);
    expect(await down.json()).toMatchObject({ error: { code: 'cell_unavailable', details: { cellId: 'cell-a' } } });
    await setStatus('cell-a', 'active');
  });
});

describe('"my orders": the router gathers the buyer’s orders from every cell', () => {
  it('merges both cells’ orders newest first; a cell marked down is skipped, one that does not answer is named', async () => {
    const userId = `buyer-${randomUUID()}`;
    const bearer = await identity.buyerToken(userId);
    const holdIn = async (event: EventLoad, cell: string, seat: number) => {
      const admission = await identity.admissionToken({
        sub: userId,
        eventId: event.eventId,
        purchaseCell: cell,
        directoryEpoch: 1,
      });
      const res = await fetch(`${router.url}/events/${event.eventId}/holds`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${bearer}`,
          'x-admission-token': admission,
          'idempotency-key': randomUUID(),
          'content-type': 'application/json',
        },
        body: JSON.stringify({ seatIds: [event.seats[seat]!.id] }),
      });
      expect(res.status).toBe(202);
      return ((await res.json()) as { orderId: string }).orderId;
    };
    // Cells earlier tests added stand for ones out of service here: only cell-a and cell-b are asked.
    controlPlane.update((f) => {
      for (const c of f.cells) if (c.id !== 'cell-a' && c.id !== 'cell-b') c.status = 'down';
    });
    await router.refreshDirectory();
    const inA = await holdIn(eventA, 'cell-a', 39);
    const inB = await holdIn(eventB, 'cell-b', 39);
    const mine = async () => {
      const res = await fetch(`${router.url}/me/orders`, { headers: { authorization: `Bearer ${bearer}` } });
      expect(res.status).toBe(200);
      return (await res.json()) as { orders: { orderId: string; eventId: string }[]; unavailableCells: string[] };
    };

    const all = await mine();
    expect(all.orders.map((o) => o.orderId)).toEqual([inB, inA]);
    expect(all.orders[0]).toMatchObject({ eventId: eventB.eventId, status: 'pending_payment', currency: 'eur' });
    expect(all.unavailableCells).toEqual([]);
    // Another buyer's token sees none of them.
    const other = await fetch(`${router.url}/me/orders`, {
      headers: { authorization: `Bearer ${await identity.buyerToken(`buyer-${randomUUID()}`)}` },
    });
    expect(((await other.json()) as { orders: unknown[] }).orders).toEqual([]);

    await setStatus('cell-b', 'down');
    const withoutB = await mine();
    expect(withoutB.orders.map((o) => o.orderId)).toEqual([inA]);
    expect(withoutB.unavailableCells).toEqual([]);
    await setStatus('cell-b', 'active');

    // A cell the directory lists as active but that does not answer: its orders are missing, and it is named.
    controlPlane.addCell('cell-gone', 'http://127.0.0.1:9');
    await router.refreshDirectory();
    const partial = await mine();
    expect(partial.orders.map((o) => o.orderId)).toEqual([inB, inA]);
    expect(partial.unavailableCells).toEqual(['cell-gone']);
    controlPlane.setStatus('cell-gone', 'down');
    await router.refreshDirectory();

    const refused = await fetch(`${router.url}/me/orders`, { headers: { authorization: 'Bearer not-a-token' } });
    expect(refused.status).toBe(401);
    expect(((await refused.json()) as { error: { code: string } }).error.code).toBe('unauthenticated');
  });
});

describe('"my orders", a page at a time', () => {
  it('walks the buyer’s orders in every cell once each, newest first, at most a page at a time', async () => {
    const userId = `buyer-${randomUUID()}`;
    const bearer = await identity.buyerToken(userId);
    // 130 orders in each cell, placed by hand: two to a millisecond in a cell (microseconds apart) and the same
    // milliseconds in both, the ties a cursor to the millisecond must settle by id.
    const base = Date.parse('2026-11-01T12:00:00.000Z');
    const expected: { orderId: string; ms: number }[] = [];
    for (const [cell, event] of [
      [cellA, eventA],
      [cellB, eventB],
    ] as const) {
      const ids = Array.from({ length: 130 }, () => randomUUID());
      const seconds = ids.map((_, i) => (base + Math.floor(i / 2) + (i % 2 ? 0.6 : 0.1)) / 1000);
      await cell.db.query(
        `INSERT INTO orders (id, event_id, user_id, status, amount, currency, correlation_id, created_at)
         SELECT id, $2, $3, 'expired', 1000, 'eur', 'paging', to_timestamp(t) FROM unnest($1::uuid[], $4::float8[]) AS u(id, t)`,
        [ids, event.eventId, userId, seconds],
      );
      expected.push(...ids.map((orderId, i) => ({ orderId, ms: base + Math.floor(i / 2) })));
    }
    expected.sort((a, b) => b.ms - a.ms || (a.orderId < b.orderId ? -1 : 1));

    const page = async (after?: string) => {
      const res = await fetch(`${router.url}/me/orders${after ? `?after=${encodeURIComponent(after)}` : ''}`, {
        headers: { authorization: `Bearer ${bearer}` },
      });
      expect(res.status).toBe(200);
      return (await res.json()) as { orders: { orderId: string; createdAt: string }[]; nextAfter: string | null };
    };
    const seen: { orderId: string; createdAt: string }[] = [];
    const sizes: number[] = [];
    let after: string | null = null;
    do {
      const p = await page(after ?? undefined);
      seen.push(...p.orders);
      sizes.push(p.orders.length);
      after = p.nextAfter;
    } while (after && sizes.length < 10);
    expect(sizes).toEqual([100, 100, 60]);
    expect(seen.map((o) => o.orderId)).toEqual(expected.map((o) => o.orderId));
    expect(seen.map((o) => Date.parse(o.createdAt))).toEqual(expected.map((o) => o.ms));

    for (const bad of [
      'yesterday',
      `2026-11-01T12:00:00Z_${randomUUID()}`,
      `2026-13-45T12:00:00.000Z_${randomUUID()}`,
      `0000-00-00T00:00:00.000Z_${randomUUID()}`,
      '2026-11-01T12:00:00.000Z_x',
    ]) {
      const res = await fetch(`${router.url}/me/orders?after=${encodeURIComponent(bad)}`, {
        headers: { authorization: `Bearer ${bearer}` },
      });
      expect(res.status, bad).toBe(400);
      const { error } = (await res.json()) as { error: { code: string; details: { issues: { path: string }[] } } };
      expect(error.code, bad).toBe('validation_failed');
      expect(
        error.details.issues.map((i) => i.path),
        bad,
      ).toEqual(['after']);
      // A cell asked directly refuses it the same way, before any query.
      const atCell = await fetch(`${cellA.url}/me/orders?after=${encodeURIComponent(bad)}`, {
        headers: { authorization: `Bearer ${bearer}` },
      });
      expect(atCell.status, bad).toBe(400);
    }
  });
});
