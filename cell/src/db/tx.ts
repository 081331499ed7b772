import { metrics, withSpan } from '@onsale/contracts';
import { sql } from 'drizzle-orm';
import type { Db, Tx } from './client';

export class EpochFencedError extends Error {
  override name = 'EpochFencedError';
  constructor(
    readonly cellId: string,
    readonly expected: number,
    readonly current: number | null,
  ) {
    super(`cell ${cellId} writer epoch ${expected} is fenced (current ${current ?? 'none'})`);
  }
}

export interface WriteContext {
  db: Db;
  cellId: string;
  epoch: number;
  /** Where write-transaction durations go, for the cell's commit-latency signal. */
  writeLatency?: { record(ms: number): void };
}

/** What PostgreSQL aborts a transaction for that the same transaction run again may pass, by its metric label. */
const RETRYABLE: Record<string, 'serialization' | 'deadlock'> = { '40001': 'serialization', '40P01': 'deadlock' };
export const MAX_WRITE_ATTEMPTS = 5;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

type PgError = { code?: string; constraint?: string; detail?: string };

/** The PostgreSQL error behind `err`: pg's own, or the one drizzle wraps as its cause. */
function pgError(err: unknown): PgError | undefined {
  const e = err as (PgError & { cause?: PgError }) | undefined;
  return e?.code !== undefined ? e : e?.cause;
}

export function isUniqueViolation(err: unknown, constraint?: string): boolean {
  const pg = pgError(err);
  return pg?.code === '23505' && (constraint === undefined || pg.constraint === constraint);
}

/** What writer_fence (sql/functions/writer_fence.sql) raises for a fenced writer; DETAIL is the current epoch. */
const FENCED_SQLSTATE = 'EF001';

/** The fence raised inside a SQL function, as the error withWriteTx throws; any other error as it is. */
export function asEpochFenced(err: unknown, ctx: Pick<WriteContext, 'cellId' | 'epoch'>): unknown {
  const pg = pgError(err);
  if (pg?.code !== FENCED_SQLSTATE) return err;
  return new EpochFencedError(ctx.cellId, ctx.epoch, pg.detail ? Number(pg.detail) : null);
}

/**
 * Every write of the cell runs here: one transaction that first proves this process still
 * holds the cell's epoch (FOR SHARE, so a concurrent fence waits for us or we see it), then
 * does the work. Deadlocks and serialization failures are retried with bounded, jittered
 * backoff and counted (onsale_tx_retries_total); the work must be safe to re-run, which the
 * idempotency key and inbox make it.
 * The fence is writer_fence (sql/functions/writer_fence.sql), whose EF001 is thrown as EpochFencedError.
 * `fencedByWork`: the work's first statement is a SQL function that calls writer_fence itself,
 * which saves the hold a round trip.
 */
export function withWriteTx<T>(
  ctx: WriteContext,
  work: (tx: Tx) => Promise<T>,
  options: { fencedByWork?: boolean } = {},
): Promise<T> {
  // One span per write transaction (retries included); the outbox rows it writes carry its context.
  return withSpan('cell.write_tx', { childOnly: true, attributes: { 'onsale.cell': ctx.cellId } }, () =>
    writeTx(ctx, work, options.fencedByWork === true),
  );
}

async function writeTx<T>(ctx: WriteContext, work: (tx: Tx) => Promise<T>, fencedByWork: boolean): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    const started = performance.now();
    try {
      const result = await ctx.db.transaction(async (tx) => {
        if (!fencedByWork) await tx.execute(sql`SELECT writer_fence(${ctx.cellId}, ${ctx.epoch})`);
        return work(tx);
      });
      ctx.writeLatency?.record(performance.now() - started);
      return result;
    } catch (err) {
      const reason = RETRYABLE[pgError(err)?.code ?? ''];
      if (!reason) throw asEpochFenced(err, ctx);
      // Past the last attempt the error goes up as it is: an HTTP caller answers 503 (writeContended), a consumer
      // sends the message to a delayed retry.
      if (attempt >= MAX_WRITE_ATTEMPTS) {
        metrics.txContentionGiveUps.inc({ reason });
        throw err;
      }
      metrics.txRetries.inc({ reason });
      // Full jitter: the transactions that collided must not collide again on the same beat.
      await sleep(Math.random() * 10 * 2 ** attempt);
    }
  }
}
