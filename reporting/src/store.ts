import type pg from 'pg';
import type { Fact } from './facts';
import { factPlaces, UNKNOWN_TENANT } from './facts';

export const PROJECTION_TABLES = ['applied', 'orders', 'minutes', 'sections', 'funnel'] as const;

const NO_TIER = '';

interface OrderRow {
  order_id: string;
  tenant_id: string;
  event_id: string;
  cell_id: string;
  status: string;
  amount: string;
  currency: string;
  seats: Fact['seats'];
  ga: Fact['ga'];
  held_at: Date | null;
  paid_at: Date | null;
  refunded: string;
  ticketed_at: Date | null;
}

type MinuteCols =
  | 'holds'
  | 'paid_orders'
  | 'seats_sold'
  | 'gross'
  | 'refunded'
  | 'refunds'
  | 'seats_refunded'
  | 'declines'
  | 'expiries'
  | 'cancels';
type FunnelCols = 'queued' | 'admitted' | 'held' | 'paid' | 'ticketed';

/**
 * One batch's effect on the projections, computed in memory from the facts in order and the
 * orders' stored state, then written with one statement per table. Row-at-a-time upserts cost
 * a round trip per fact and seat, which capped the consumer far below the facts' arrival rate.
 */
class Delta {
  readonly minutes = new Map<
    string,
    Record<MinuteCols, bigint> & { tenant_id: string; event_id: string; minute: string }
  >();
  readonly sections = new Map<
    string,
    { tenant_id: string; event_id: string; section: string; tier: string; held: number; sold: number }
  >();
  readonly funnel = new Map<string, Record<FunnelCols, number> & { tenant_id: string; event_id: string }>();

  minute(f: Fact, cols: Partial<Record<MinuteCols, bigint | number>>) {
    const minute = new Date(Math.floor(f.occurredAt.getTime() / 60_000) * 60_000).toISOString();
    const key = JSON.stringify([f.tenantId, f.eventId, minute]);
    const row = this.minutes.get(key) ?? {
      tenant_id: f.tenantId,
      event_id: f.eventId,
      minute,
      holds: 0n,
      paid_orders: 0n,
      seats_sold: 0n,
      gross: 0n,
      refunded: 0n,
      refunds: 0n,
      seats_refunded: 0n,
      declines: 0n,
      expiries: 0n,
      cancels: 0n,
    };
    for (const [k, v] of Object.entries(cols)) row[k as MinuteCols] += BigInt(v);
    this.minutes.set(key, row);
  }

  /** Each place's section moves by `held` and `sold`: a seat's section, a GA area's own (its name) per place. */
  places(f: Fact, order: Pick<OrderRow, 'seats' | 'ga'> | null, held: number, sold: number) {
    const lines = [
      ...(order?.seats ?? []).map((s) => ({ section: s.section, tier: s.tier ?? NO_TIER, n: 1 })),
      ...(order?.ga ?? []).map((g) => ({ section: g.area, tier: g.tier, n: g.quantity })),
    ];
    for (const { section, tier, n } of lines) {
      const key = JSON.stringify([f.tenantId, f.eventId, section, tier]);
      const row = this.sections.get(key) ?? {
        tenant_id: f.tenantId,
        event_id: f.eventId,
        section,
        tier,
        held: 0,
        sold: 0,
      };
      row.held += held * n;
      row.sold += sold * n;
      this.sections.set(key, row);
    }
  }

  step(f: Fact, col: FunnelCols, by: number) {
    const key = JSON.stringify([f.tenantId, f.eventId]);
    const row = this.funnel.get(key) ?? {
      tenant_id: f.tenantId,
      event_id: f.eventId,
      queued: 0,
      admitted: 0,
      held: 0,
      paid: 0,
      ticketed: 0,
    };
    row[col] += by;
    this.funnel.set(key, row);
  }
}

/**
 * A fact's effect. Order-level effects are guarded by the order's status, so a second capture
 * fact for one order (a relay duplicate with a new id) counts nothing.
 */
function applyOne(orders: Map<string, OrderRow>, touched: Set<string>, d: Delta, f: Fact) {
  if (f.tenantId === UNKNOWN_TENANT) return;
  const order = f.orderId ? orders.get(f.orderId) : undefined;
  const move = (from: string[], to: string) => {
    if (!order || !from.includes(order.status)) return false;
    order.status = to;
    touched.add(order.order_id);
    return true;
  };
  switch (f.kind) {
    case 'queued':
    case 'admitted':
      return d.step(f, f.kind, f.count ?? 0);
    case 'release_decided':
      return;
    case 'held': {
      if (order || !f.orderId) return;
      orders.set(f.orderId, {
        order_id: f.orderId,
        tenant_id: f.tenantId,
        event_id: f.eventId,
        cell_id: f.source,
        status: 'held',
        amount: String(f.amount),
        currency: f.currency!,
        seats: f.seats,
        ga: f.ga,
        held_at: f.occurredAt,
        paid_at: null,
        refunded: '0',
        ticketed_at: null,
      });
      touched.add(f.orderId);
      d.minute(f, { holds: 1 });
      d.places(f, f, 1, 0);
      return d.step(f, 'held', 1);
    }
    case 'paid': {
      if (move(['held', 'declined'], 'paid')) {
        order!.paid_at = f.occurredAt;
        d.minute(f, { paid_orders: 1, seats_sold: factPlaces(f), gross: f.amount ?? 0n });
        d.places(f, f, -1, 1);
        return d.step(f, 'paid', 1);
      }
      // Captured after the seats went back (expired or released): money taken, no seat sold; a refund follows.
      if (order && order.paid_at === null) {
        order.paid_at = f.occurredAt;
        touched.add(order.order_id);
        d.minute(f, { gross: f.amount ?? 0n });
      }
      return;
    }
    case 'declined':
      if (move(['held'], 'declined')) d.minute(f, { declines: 1 });
      return;
    case 'expired':
    case 'released':
    case 'canceled':
      if (!move(['held', 'declined'], f.kind)) return;
      if (f.kind === 'expired') d.minute(f, { expiries: 1 });
      if (f.kind === 'canceled') d.minute(f, { cancels: 1 });
      return d.places(f, f, -1, 0);
    case 'refunded': {
      if (order?.refunded !== '0') return;
      // A sold order's seats leave the sold count, in the refund's minute and its sections; an order
      // captured after its seats went back never counted any, so only its money comes back.
      // An order cancelled with the event and then captured (its authorization raced the cancel) ends
      // refunded, as in the cell: it leaves the cancelled count, so each order is counted in one of them.
      const sold = order.status === 'paid' || order.status === 'ticketed' ? order : null;
      const cancels = order.status === 'canceled' ? -1 : 0;
      order.refunded = order.amount;
      order.status = 'refunded';
      touched.add(order.order_id);
      d.minute(f, {
        refunded: BigInt(order.amount),
        refunds: 1,
        seats_refunded: sold ? factPlaces(sold) : 0,
        cancels,
      });
      return d.places(f, sold, 0, -1);
    }
    case 'ticketed':
      if (move(['paid'], 'ticketed')) {
        order!.ticketed_at = f.occurredAt;
        d.step(f, 'ticketed', 1);
      }
      return;
  }
}

const big = (v: bigint | number) => v.toString();

/** Writes a batch: rows in key order, so concurrent batches lock shared rows in the same order. */
async function applyBatch(q: pg.PoolClient, facts: Fact[]): Promise<void> {
  const fresh = await q.query<{ fact_id: string }>(
    'INSERT INTO reporting.applied (fact_id) SELECT unnest($1::uuid[]) ON CONFLICT DO NOTHING RETURNING fact_id',
    [facts.map((f) => f.factId)],
  );
  const unapplied = new Set(fresh.rows.map((r) => r.fact_id));
  const todo = facts.filter((f) => unapplied.delete(f.factId));
  if (todo.length === 0) return;
  const ids = [...new Set(todo.flatMap((f) => (f.orderId ? [f.orderId] : [])))].sort();
  const stored = await q.query<OrderRow>(
    `SELECT order_id::text, tenant_id, event_id::text, cell_id, status, amount::text, currency, seats, ga,
            held_at, paid_at, refunded::text, ticketed_at
       FROM reporting.orders WHERE order_id = ANY($1::uuid[]) ORDER BY order_id FOR UPDATE`,
    [ids],
  );
  const orders = new Map(stored.rows.map((o) => [o.order_id, o]));
  const touched = new Set<string>();
  const d = new Delta();
  for (const f of todo) applyOne(orders, touched, d, f);

  const sorted = <T>(m: Map<string, T>) => [...m.entries()].sort(([a], [b]) => (a < b ? -1 : 1)).map(([, v]) => v);
  if (touched.size > 0) {
    const rows = [...touched].sort().map((id) => {
      const o = orders.get(id)!;
      return { ...o, seats: JSON.stringify(o.seats), ga: o.ga ? JSON.stringify(o.ga) : null };
    });
    await q.query(
      `INSERT INTO reporting.orders (order_id, tenant_id, event_id, cell_id, status, amount, currency, seats, ga,
                                     held_at, paid_at, refunded, ticketed_at)
       SELECT order_id, tenant_id, event_id, cell_id, status, amount, currency, seats::jsonb, ga::jsonb, held_at, paid_at,
              refunded, ticketed_at
         FROM jsonb_to_recordset($1::jsonb) AS r(order_id uuid, tenant_id text, event_id uuid, cell_id text, status text,
              amount bigint, currency text, seats text, ga text, held_at timestamptz, paid_at timestamptz, refunded bigint,
              ticketed_at timestamptz)
       ON CONFLICT (order_id) DO UPDATE SET status = EXCLUDED.status, paid_at = EXCLUDED.paid_at,
         refunded = EXCLUDED.refunded, ticketed_at = EXCLUDED.ticketed_at`,
      [JSON.stringify(rows)],
    );
  }
  if (d.minutes.size > 0) {
    const rows = sorted(d.minutes).map((m) =>
      Object.fromEntries(Object.entries(m).map(([k, v]) => [k, typeof v === 'bigint' ? big(v) : v])),
    );
    await q.query(
      `INSERT INTO reporting.minutes (tenant_id, event_id, minute, holds, paid_orders, seats_sold, gross, refunded,
                                      refunds, seats_refunded, declines, expiries, cancels)
       SELECT * FROM jsonb_to_recordset($1::jsonb) AS r(tenant_id text, event_id uuid, minute timestamptz, holds int,
              paid_orders int, seats_sold int, gross bigint, refunded bigint, refunds int, seats_refunded int,
              declines int, expiries int, cancels int)
       ON CONFLICT (tenant_id, event_id, minute) DO UPDATE SET
         holds = reporting.minutes.holds + EXCLUDED.holds,
         paid_orders = reporting.minutes.paid_orders + EXCLUDED.paid_orders,
         seats_sold = reporting.minutes.seats_sold + EXCLUDED.seats_sold,
         gross = reporting.minutes.gross + EXCLUDED.gross,
         refunded = reporting.minutes.refunded + EXCLUDED.refunded,
         refunds = reporting.minutes.refunds + EXCLUDED.refunds,
         seats_refunded = reporting.minutes.seats_refunded + EXCLUDED.seats_refunded,
         declines = reporting.minutes.declines + EXCLUDED.declines,
         expiries = reporting.minutes.expiries + EXCLUDED.expiries,
         cancels = reporting.minutes.cancels + EXCLUDED.cancels`,
      [JSON.stringify(rows)],
    );
  }
  if (d.sections.size > 0) {
    await q.query(
      `INSERT INTO reporting.sections (tenant_id, event_id, section, tier, held, sold)
       SELECT * FROM jsonb_to_recordset($1::jsonb)
                AS r(tenant_id text, event_id uuid, section text, tier text, held int, sold int)
       ON CONFLICT (tenant_id, event_id, section, tier) DO UPDATE SET
         held = reporting.sections.held + EXCLUDED.held, sold = reporting.sections.sold + EXCLUDED.sold`,
      [JSON.stringify(sorted(d.sections))],
    );
  }
  if (d.funnel.size > 0) {
    await q.query(
      `INSERT INTO reporting.funnel (tenant_id, event_id, queued, admitted, held, paid, ticketed)
       SELECT * FROM jsonb_to_recordset($1::jsonb)
                AS r(tenant_id text, event_id uuid, queued bigint, admitted bigint, held bigint, paid bigint, ticketed bigint)
       ON CONFLICT (tenant_id, event_id) DO UPDATE SET
         queued = reporting.funnel.queued + EXCLUDED.queued, admitted = reporting.funnel.admitted + EXCLUDED.admitted,
         held = reporting.funnel.held + EXCLUDED.held, paid = reporting.funnel.paid + EXCLUDED.paid,
         ticketed = reporting.funnel.ticketed + EXCLUDED.ticketed`,
      [JSON.stringify(sorted(d.funnel))],
    );
  }
}

/** Facts per statement set: bounds the size of one batch's parameters (a rebuild passes every fact). */
const CHUNK = 5_000;

/**
 * Applies facts in the order given (per source partition, by offset), in one transaction, each
 * at most once: its id is recorded in the same transaction as its effect.
 */
export async function applyFacts(pool: pg.Pool, facts: Fact[], first?: string): Promise<void> {
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    if (first) await client.query(first);
    for (let i = 0; i < facts.length; i += CHUNK) await applyBatch(client, facts.slice(i, i + CHUNK));
    await client.query('COMMIT');
  } catch (err) {
    await client.query('ROLLBACK').catch(() => {});
    throw err;
  } finally {
    client.release();
  }
}
