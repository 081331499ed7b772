import type { EventLoad } from '@onsale/contracts';
import pg from 'pg';
import { describe, expect } from 'vitest';
import { admittedBuyer } from '../../test/support/buyer';
import type { TestCell } from '../../test/support/cell';
import { cellTest } from '../../test/support/fixtures';

const it = cellTest({ seats: 200 });

const internal = (cell: TestCell, event: EventLoad, method: string, path: string, body?: unknown) =>
  fetch(`${cell.url}/internal/events/${event.eventId}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${cell.internalToken}`,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });

/** Waits until this many sessions of the cell's database wait on a lock. */
async function waitForLockWaiters(cell: TestCell, n: number) {
  for (let i = 0; i < 500; i++) {
    const r = await cell.db.query<{ n: number }>(
      "SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'",
    );
    if (r[0]!.n >= n) return;
    await new Promise((res) => setTimeout(res, 10));
  }
  throw new Error(`fewer than ${n} sessions wait on a lock`);
}

describe('evacuation on the cell: freeze, ledger view, blocked seats', () => {
  it('a hold racing the freeze either commits before the freeze returns or is refused with 503 event_moving', async ({
    identity,
    cell,
    event,
  }) => {
    // Five holds are stalled on their seat locks (taken here) after their check of the freeze, a freeze
    // queues behind them, five more holds arrive behind the freeze; then the seats are let go.
    const blocker = new pg.Client({ connectionString: cell.db.url });
    await blocker.connect();
    const early = event.seats.slice(0, 5).map((s) => s.id);
    const lateSeats = event.seats.slice(5, 10).map((s) => s.id);
    await blocker.query('BEGIN');
    await blocker.query('SELECT id FROM seats WHERE id = ANY($1::uuid[]) FOR UPDATE', [early]);
    const buyers = await Promise.all(Array.from({ length: 10 }, () => admittedBuyer(identity, cell, event.eventId)));
    const first = early.map((seat, i) => buyers[i]!.hold([seat]));
    await waitForLockWaiters(cell, 5);
    let freezeReturnedAt = 0;
    let committedAtFreeze = -1;
    const freezing = internal(cell, event, 'PUT', '/sales-freeze').then(async (r) => {
      freezeReturnedAt = Date.now();
      committedAtFreeze = (await cell.db.query('SELECT id FROM orders')).length;
      return r;
    });
    let releasedAt = 0;
    let second: Promise<Response>[] = [];
    try {
      await waitForLockWaiters(cell, 6);
      second = lateSeats.map((seat, i) => buyers[5 + i]!.hold([seat]));
      await new Promise((r) => setTimeout(r, 300));
    } finally {
      releasedAt = Date.now();
      await blocker.query('COMMIT');
      await blocker.end();
    }

    const frozen = await freezing;
    expect(frozen.status).toBe(200);
    expect(freezeReturnedAt).toBeGreaterThanOrEqual(releasedAt);
    const firstAnswers = await Promise.all(first);
    const secondAnswers = await Promise.all(second);
    // The holds that were inside their transaction when the freeze came commit before it returns.
    expect(firstAnswers.map((r) => r.status)).toEqual(Array(5).fill(202));
    // Those arriving while the freeze waits either slip in before it (a share lock next to share locks) or are
    // refused: none commits after the freeze returned.
    const statuses = secondAnswers.map((r) => r.status);
    expect(statuses.every((st) => st === 202 || st === 503)).toBe(true);
    expect((await cell.db.query('SELECT id FROM orders')).length).toBe(committedAtFreeze);
    expect(committedAtFreeze).toBe(5 + statuses.filter((st) => st === 202).length);
    for (const r of secondAnswers.filter((a) => a.status === 503)) {
      expect(r.headers.get('retry-after')).toBeTruthy();
      expect(((await r.json()) as { error: { code: string } }).error.code).toBe('event_moving');
    }
    const late = await (await admittedBuyer(identity, cell, event.eventId)).hold([event.seats[190]!.id]);
    expect(late.status).toBe(503);

    const ledger = (await (await internal(cell, event, 'GET', '/ledger')).json()) as {
      frozen: boolean;
      occupiedSeatIds: string[];
      activeHolds: number;
      openOrders: number;
    };
    expect(ledger).toMatchObject({ frozen: true, activeHolds: committedAtFreeze, openOrders: committedAtFreeze });
    expect(ledger.occupiedSeatIds).toHaveLength(committedAtFreeze);

    expect((await internal(cell, event, 'DELETE', '/sales-freeze?status=on_sale')).status).toBe(200);
    const after = await (await admittedBuyer(identity, cell, event.eventId)).hold([event.seats[190]!.id]);
    expect(after.status).toBe(202);
  });

  it('blocked seats are taken until released, idempotently', async ({ identity, cell, event }) => {
    expect((await internal(cell, event, 'DELETE', '/sales-freeze?status=on_sale')).status).toBe(200);
    const seats = [event.seats[180]!.id, event.seats[181]!.id];
    for (let i = 0; i < 2; i++) {
      const r = await internal(cell, event, 'POST', '/blocked-seats', { sourceCell: 'cell-src', seatIds: seats });
      expect(await r.json()).toMatchObject({ blocked: 2 });
    }
    const buyer = await admittedBuyer(identity, cell, event.eventId);
    const refused = await buyer.hold([seats[0]!]);
    expect(refused.status).toBe(409);
    const listed = (await (await internal(cell, event, 'GET', '/blocked-seats?sourceCell=cell-src')).json()) as {
      seatIds: string[];
    };
    expect(listed.seatIds).toEqual([...seats].sort());
    // The target's own ledger view does not count the placeholder as a sale or an open order.
    const ledger = (await (await internal(cell, event, 'GET', '/ledger')).json()) as { occupiedSeatIds: string[] };
    expect(ledger.occupiedSeatIds).not.toContain(seats[0]);

    const released = await internal(cell, event, 'POST', '/blocked-seats/release', {
      sourceCell: 'cell-src',
      seatIds: [seats[0]],
    });
    expect(await released.json()).toMatchObject({ blocked: 1 });
    expect((await buyer.hold([seats[0]!])).status).toBe(202);
    expect((await buyer.hold([seats[1]!])).status).toBe(409);
  });
});
