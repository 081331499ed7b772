import { type EventLoad, metrics, renderError } from '@onsale/contracts';
import { sql } from 'drizzle-orm';
import { Hono } from 'hono';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { admittedBuyer } from '../../test/support/buyer';
import { startTestCell, type TestCell } from '../../test/support/cell';
import { startIdentity, type TestIdentity } from '../../test/support/identity';
import { eventually } from '../../test/support/kafka';
import { eventLoad, loadIntoCell } from '../../test/support/seed';
import type { CellContext } from '../src/context';
import { MAX_WRITE_ATTEMPTS, withWriteTx } from '../src/db/tx';
import { expireOrders } from '../src/holds/expire';

/**
 * PostgreSQL aborts a write for its concurrency (a deadlock, a serialization failure); the cell's write transaction
 * runs it again with jittered backoff, counts it, and gives up after a bounded number of attempts with a 503. Forced
 * here with the expiry verb itself (expireOrders, one transaction per batch as the expiry worker runs it) in
 * transactions that take the same orders in opposite orders, against the real database.
 */

let identity: TestIdentity;
let cell: TestCell;
let event: EventLoad;
let ctx: CellContext;
const cause = { cellId: 'cell-t', causationId: 'tx-retries-test' };

beforeAll(async () => {
  identity = await startIdentity();
  cell = await startTestCell(identity);
  event = await loadIntoCell(cell, eventLoad(10));
  ctx = cell.api.services.ctx;
});
afterAll(async () => {
  await cell?.close();
  await identity?.close();
});

/** A real hold through the API, then lapsed (its expiry moved into the past), as the expiry worker would find it. */
async function lapsedOrder(seat: number): Promise<string> {
  const buyer = await admittedBuyer(identity, cell, event.eventId);
  const res = await buyer.hold([event.seats[seat]!.id]);
  expect(res.status).toBe(202);
  const { orderId } = (await res.json()) as { orderId: string };
  await cell.db.query(`UPDATE holds SET expires_at = now() - interval '1 second' WHERE order_id = $1`, [orderId]);
  return orderId;
}

const retries = async (reason: string) =>
  (await metrics.txRetries.get()).values.find((v) => v.labels.reason === reason)?.value ?? 0;
const giveUps = async (reason: string) =>
  (await metrics.txContentionGiveUps.get()).values.find((v) => v.labels.reason === reason)?.value ?? 0;

/** What expiring the orders wrote: HoldExpired rows, expired orders and released seats, per order. */
const effects = (orderIds: string[]) =>
  cell.db.query<{ order_id: string; hold_expired: number; status: string; released: number }>(
    `SELECT o.id AS order_id,
            (SELECT count(*)::int FROM outbox x WHERE x.aggregate_id = o.id AND x.event_type = 'HoldExpired') AS hold_expired,
            o.status,
            (SELECT count(*)::int FROM hold_seats hs JOIN holds h ON h.id = hs.hold_id
              WHERE h.order_id = o.id AND hs.released_at IS NOT NULL) AS released
       FROM orders o WHERE o.id = ANY($1::uuid[]) ORDER BY o.id`,
    [orderIds],
  );

const deadlocksSeen = async () =>
  (
    await cell.db.query<{ n: number }>(
      'SELECT deadlocks::int AS n FROM pg_stat_database WHERE datname = current_database()',
    )
  )[0]!.n;

/** Resolves once `n` parties have arrived: each transaction waits here for the other's first lock. */
function barrier(n: number) {
  let arrived = 0;
  let open!: () => void;
  const opened = new Promise<void>((r) => {
    open = r;
  });
  return async () => {
    if (++arrived >= n) open();
    await opened;
  };
}

describe('write transactions PostgreSQL aborts for concurrency', () => {
  it('a deadlock between two expiry batches is retried, counted, and expires each hold once', async () => {
    const [a, b] = [await lapsedOrder(0), await lapsedOrder(1)];
    const [retriesBefore, deadlocksBefore] = [await retries('deadlock'), await deadlocksSeen()];
    const bothLocked = barrier(2);
    let attempts = 0;
    // Each takes one order, waits until the other has taken its own, then asks for the other's: a cycle.
    const batch = (first: string, second: string) =>
      withWriteTx(ctx, async (tx) => {
        attempts++;
        const expired = await expireOrders(tx, cause, [first]);
        await bothLocked();
        return [...expired, ...(await expireOrders(tx, cause, [second]))];
      });
    const [one, two] = await Promise.all([batch(a, b), batch(b, a)]);

    // The victim ran again. On a loaded machine its rerun may take its first order back before the winner's backend
    // wakes to take it, and the two deadlock once more: every deadlock is one more run, and no more.
    const reruns = attempts - 2;
    expect(reruns).toBeGreaterThanOrEqual(1);
    expect(await retries('deadlock')).toBe(retriesBefore + reruns);
    // Each rerun answers a deadlock PostgreSQL detected. A backend flushes its statistics at most once a second, else
    // when idle for 10 s.
    await eventually(
      async () => (await deadlocksSeen()) === deadlocksBefore + reruns,
      'the deadlocks in pg_stat_database',
      15_000,
    );
    // The winner expired both holds; the other batch's last run found nothing left to do.
    expect([one.length, two.length].sort()).toEqual([0, 2]);
    expect(await effects([a, b])).toEqual(
      [a, b].sort().map((order_id) => ({ order_id, hold_expired: 1, status: 'expired', released: 1 })),
    );
  });

  it('a serialization failure (a concurrent expiry under REPEATABLE READ) is retried, counted, done once', async () => {
    const order = await lapsedOrder(2);
    const before = await retries('serialization');
    let attempts = 0;
    let rival: Promise<unknown> | undefined;
    const expired = await withWriteTx(
      ctx,
      async (tx) => {
        attempts++;
        await tx.execute(sql`SET TRANSACTION ISOLATION LEVEL REPEATABLE READ`);
        // The snapshot is taken here; the rival expires the same hold and commits after it.
        await tx.execute(sql`SELECT writer_fence(${ctx.cellId}, ${ctx.epoch})`);
        rival ??= withWriteTx(ctx, (other) => expireOrders(other, cause, [order]));
        await rival;
        return expireOrders(tx, cause, [order]);
      },
      { fencedByWork: true },
    );
    expect(attempts).toBe(2);
    expect(expired).toEqual([]); // the rival did it; the retry saw it done
    expect(await retries('serialization')).toBe(before + 1);
    expect(await effects([order])).toEqual([{ order_id: order, hold_expired: 1, status: 'expired', released: 1 }]);
  });

  it('gives up after a bounded number of attempts, counts it, and the caller answers 503 with Retry-After', async () => {
    const [retriesBefore, giveUpsBefore] = [await retries('serialization'), await giveUps('serialization')];
    let attempts = 0;
    const app = new Hono();
    app.post('/always-conflicting', async (c) => {
      await withWriteTx(ctx, async (tx) => {
        attempts++;
        await tx.execute(sql`DO $$ BEGIN RAISE EXCEPTION 'forced' USING ERRCODE = 'serialization_failure'; END $$`);
      });
      return c.json({ ok: true });
    });
    app.onError(renderError());

    const res = await app.request('/always-conflicting', { method: 'POST' });
    expect(res.status).toBe(503);
    expect(res.headers.get('retry-after')).toBe('1');
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe('store_unavailable');
    expect(attempts).toBe(MAX_WRITE_ATTEMPTS);
    expect(await retries('serialization')).toBe(retriesBefore + MAX_WRITE_ATTEMPTS - 1);
    expect(await giveUps('serialization')).toBe(giveUpsBefore + 1);
  });
});
