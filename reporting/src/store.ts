import type pg from 'pg';
import type { Fact } from './facts';
import { UNKNOWN_TENANT } from './facts';

/**
 * The live projections, in their own PostgreSQL schema. Every fact is applied at most once
 * (its id is recorded in the same transaction as its effect), and order-level effects are
 * guarded by the order's state, so a second capture fact for one order counts nothing.
 */
const SCHEMA = `
CREATE SCHEMA IF NOT EXISTS reporting;
CREATE TABLE IF NOT EXISTS reporting.applied (fact_id uuid PRIMARY KEY);
CREATE TABLE IF NOT EXISTS reporting.orders (
  order_id uuid PRIMARY KEY, tenant_id text NOT NULL, event_id uuid NOT NULL, cell_id text NOT NULL,
  status text NOT NULL, amount bigint NOT NULL, currency text NOT NULL, seats jsonb NOT NULL,
  held_at timestamptz, paid_at timestamptz, refunded bigint NOT NULL DEFAULT 0, ticketed_at timestamptz);
CREATE INDEX IF NOT EXISTS reporting_orders_event ON reporting.orders (tenant_id, event_id);
CREATE TABLE IF NOT EXISTS reporting.minutes (
  tenant_id text NOT NULL, event_id uuid NOT NULL, minute timestamptz NOT NULL,
  holds int NOT NULL DEFAULT 0, paid_orders int NOT NULL DEFAULT 0, seats_sold int NOT NULL DEFAULT 0,
  gross bigint NOT NULL DEFAULT 0, refunded bigint NOT NULL DEFAULT 0, declines int NOT NULL DEFAULT 0,
  expiries int NOT NULL DEFAULT 0, PRIMARY KEY (tenant_id, event_id, minute));
CREATE TABLE IF NOT EXISTS reporting.sections (
  tenant_id text NOT NULL, event_id uuid NOT NULL, section text NOT NULL, tier text NOT NULL,
  sold int NOT NULL DEFAULT 0, held int NOT NULL DEFAULT 0, PRIMARY KEY (tenant_id, event_id, section, tier));
CREATE TABLE IF NOT EXISTS reporting.funnel (
  tenant_id text NOT NULL, event_id uuid NOT NULL, queued bigint NOT NULL DEFAULT 0,
  admitted bigint NOT NULL DEFAULT 0, held bigint NOT NULL DEFAULT 0, paid bigint NOT NULL DEFAULT 0,
  ticketed bigint NOT NULL DEFAULT 0, PRIMARY KEY (tenant_id, event_id));
`;

export const PROJECTION_TABLES = ['applied', 'orders', 'minutes', 'sections', 'funnel'] as const;

export async function migrateReporting(pool: pg.Pool): Promise<void> {
  const client = await pool.connect();
  try {
    // One migrator at a time: CREATE ... IF NOT EXISTS races on the catalog otherwise.
    await client.query('SELECT pg_advisory_lock(hashtext($1))', ['reporting.migrate']);
    await client.query(SCHEMA);
  } finally {
    await client.query('SELECT pg_advisory_unlock(hashtext($1))', ['reporting.migrate']).catch(() => {});
    client.release();
  }
}

type Q = pg.PoolClient;
const NO_TIER = '';

async function bumpMinute(q: Q, f: Fact, cols: Record<string, number | bigint>) {
  const names = Object.keys(cols);
  const values = Object.values(cols).map(String);
  await q.query(
    `INSERT INTO reporting.minutes (tenant_id, event_id, minute, ${names.join(', ')})
     VALUES ($1, $2, date_trunc('minute', $3::timestamptz), ${names.map((_, i) => `$${i + 4}`).join(', ')})
     ON CONFLICT (tenant_id, event_id, minute) DO UPDATE SET
       ${names.map((n) => `${n} = reporting.minutes.${n} + EXCLUDED.${n}`).join(', ')}`,
    [f.tenantId, f.eventId, f.occurredAt, ...values],
  );
}

async function bumpFunnel(q: Q, f: Fact, col: 'queued' | 'admitted' | 'held' | 'paid' | 'ticketed', by: number) {
  await q.query(
    `INSERT INTO reporting.funnel (tenant_id, event_id, ${col}) VALUES ($1, $2, $3)
     ON CONFLICT (tenant_id, event_id) DO UPDATE SET ${col} = reporting.funnel.${col} + EXCLUDED.${col}`,
    [f.tenantId, f.eventId, by],
  );
}

async function bumpSections(q: Q, f: Fact, seats: Fact['seats'], held: number, sold: number) {
  for (const s of seats ?? []) {
    await q.query(
      `INSERT INTO reporting.sections (tenant_id, event_id, section, tier, held, sold) VALUES ($1, $2, $3, $4, $5, $6)
       ON CONFLICT (tenant_id, event_id, section, tier) DO UPDATE SET
         held = reporting.sections.held + EXCLUDED.held, sold = reporting.sections.sold + EXCLUDED.sold`,
      [f.tenantId, f.eventId, s.section, s.tier ?? NO_TIER, held, sold],
    );
  }
}

/** Moves an order from one of `from` to `to`; the previous status, or null when it was elsewhere. */
async function transition(
  q: Q,
  orderId: string,
  from: string[],
  to: string,
  set = '',
  extra: unknown[] = [],
): Promise<string | null> {
  const r = await q.query<{ prev: string }>(
    `WITH p AS (SELECT status AS prev FROM reporting.orders WHERE order_id = $1 FOR UPDATE)
     UPDATE reporting.orders o SET status = $3 ${set}
       FROM p WHERE o.order_id = $1 AND p.prev = ANY($2::text[]) RETURNING p.prev`,
    [orderId, from, to, ...extra],
  );
  return r.rows[0]?.prev ?? null;
}

async function applyOne(q: Q, f: Fact): Promise<void> {
  const fresh = await q.query('INSERT INTO reporting.applied (fact_id) VALUES ($1) ON CONFLICT DO NOTHING', [f.factId]);
  if (fresh.rowCount === 0) return;
  if (f.tenantId === UNKNOWN_TENANT) return;
  switch (f.kind) {
    case 'queued':
    case 'admitted':
      return bumpFunnel(q, f, f.kind, f.count ?? 0);
    case 'release_decided':
      return;
    case 'held': {
      const inserted = await q.query(
        `INSERT INTO reporting.orders (order_id, tenant_id, event_id, cell_id, status, amount, currency, seats, held_at)
         VALUES ($1, $2, $3, $4, 'held', $5, $6, $7, $8) ON CONFLICT (order_id) DO NOTHING`,
        [
          f.orderId,
          f.tenantId,
          f.eventId,
          f.source,
          String(f.amount),
          f.currency,
          JSON.stringify(f.seats),
          f.occurredAt,
        ],
      );
      if (inserted.rowCount === 0) return;
      await bumpMinute(q, f, { holds: 1 });
      await bumpSections(q, f, f.seats, 1, 0);
      return bumpFunnel(q, f, 'held', 1);
    }
    case 'paid': {
      const prev = await transition(q, f.orderId!, ['held', 'declined'], 'paid', ', paid_at = $4', [f.occurredAt]);
      if (prev === null) {
        // Captured after the seats went back (expired or released): money taken, no seat sold; a refund follows.
        const late = await q.query(
          `UPDATE reporting.orders SET paid_at = $2 WHERE order_id = $1 AND paid_at IS NULL RETURNING order_id`,
          [f.orderId, f.occurredAt],
        );
        if (late.rowCount) await bumpMinute(q, f, { gross: f.amount ?? 0n });
        return;
      }
      const seats = f.seats?.length ?? 0;
      await bumpMinute(q, f, { paid_orders: 1, seats_sold: seats, gross: f.amount ?? 0n });
      await bumpSections(q, f, f.seats, -1, 1);
      return bumpFunnel(q, f, 'paid', 1);
    }
    case 'declined': {
      const prev = await transition(q, f.orderId!, ['held'], 'declined');
      if (prev !== null) await bumpMinute(q, f, { declines: 1 });
      return;
    }
    case 'expired':
    case 'released': {
      const prev = await transition(q, f.orderId!, ['held', 'declined'], f.kind);
      if (prev === null) return;
      if (f.kind === 'expired') await bumpMinute(q, f, { expiries: 1 });
      return bumpSections(q, f, f.seats, -1, 0);
    }
    case 'refunded': {
      const r = await q.query(
        `UPDATE reporting.orders SET refunded = amount WHERE order_id = $1 AND refunded = 0 RETURNING amount`,
        [f.orderId],
      );
      if (r.rowCount) await bumpMinute(q, f, { refunded: BigInt(r.rows[0].amount) });
      return;
    }
    case 'ticketed': {
      const prev = await transition(q, f.orderId!, ['paid'], 'ticketed', ', ticketed_at = $4', [f.occurredAt]);
      if (prev !== null) await bumpFunnel(q, f, 'ticketed', 1);
      return;
    }
  }
}

/** Applies facts in the order given (per source partition, by offset), in one transaction. */
export async function applyFacts(pool: pg.Pool, facts: Fact[], first?: string): Promise<void> {
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    if (first) await client.query(first);
    for (const f of facts) await applyOne(client, f);
    await client.query('COMMIT');
  } catch (err) {
    await client.query('ROLLBACK').catch(() => {});
    throw err;
  } finally {
    client.release();
  }
}
