import { pollingLoop } from '@onsale/contracts';
import { sql } from 'drizzle-orm';
import type { CellContext } from '../context';
import { withWriteTx } from '../db/tx';
import { expireOrders } from '../holds/expire';

export interface ExpiryOptions {
  batchSize: number;
  intervalMs: number;
  /** Called after every batch that reached the database (readiness). */
  onPass?: () => void;
}

/**
 * Expires one bounded batch of lapsed holds in one transaction. Orders are claimed with SKIP
 * LOCKED: a batch never waits on an order a buyer or the saga is working on (it is picked up
 * next time), so a paused worker catching up makes short transactions, not a lock storm.
 */
export async function expireBatch(ctx: CellContext, batchSize: number): Promise<number> {
  return withWriteTx(ctx, async (tx) => {
    const due = await tx.execute<{ id: string }>(sql`
      SELECT o.id FROM holds h JOIN orders o ON o.id = h.order_id
       WHERE h.status = 'active' AND h.expires_at <= now()
       ORDER BY h.expires_at LIMIT ${batchSize}
       FOR UPDATE OF o SKIP LOCKED`);
    await expireOrders(
      tx,
      { cellId: ctx.cellId, causationId: 'expiry-worker' },
      due.rows.map((r) => r.id),
    );
    return due.rows.length;
  });
}

export function createExpiryWorker(ctx: CellContext, options: ExpiryOptions) {
  let lastPurge = 0;

  async function purgeIdempotencyKeys() {
    if (Date.now() - lastPurge < 60_000) return;
    lastPurge = Date.now();
    await ctx.db.execute(sql`
      DELETE FROM idempotency_keys WHERE ctid IN (SELECT ctid FROM idempotency_keys WHERE expires_at < now() LIMIT 5000)`);
  }

  return {
    /** Expires until stopped: at once while batches come back full, every `intervalMs` otherwise. */
    start: () =>
      pollingLoop({
        name: 'expiry batch',
        log: ctx.log,
        intervalMs: options.intervalMs,
        onSuccess: options.onPass,
        pass: async () => {
          if ((await expireBatch(ctx, options.batchSize)) === options.batchSize) return 0;
          await purgeIdempotencyKeys();
        },
      }),
  };
}
