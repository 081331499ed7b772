import type pg from 'pg';

/** Reads of the projections for the sales API; every query is scoped by tenant and event. */

export async function salesSummary(pool: pg.Pool, tenantId: string, eventId: string) {
  const r = await pool.query(
    `SELECT coalesce(sum(holds), 0)::int AS holds, coalesce(sum(paid_orders), 0)::int AS "paidOrders",
            coalesce(sum(seats_sold - seats_refunded), 0)::int AS "seatsSold", coalesce(sum(gross), 0)::bigint AS gross,
            coalesce(sum(refunded), 0)::bigint AS refunded, coalesce(sum(refunds), 0)::int AS refunds,
            coalesce(sum(seats_refunded), 0)::int AS "seatsRefunded", coalesce(sum(declines), 0)::int AS declines,
            coalesce(sum(expiries), 0)::int AS expiries, coalesce(sum(cancels), 0)::int AS cancels
       FROM reporting.minutes WHERE tenant_id = $1 AND event_id = $2`,
    [tenantId, eventId],
  );
  const f = await pool.query(
    `SELECT queued::int, admitted::int, held::int, paid::int, ticketed::int
       FROM reporting.funnel WHERE tenant_id = $1 AND event_id = $2`,
    [tenantId, eventId],
  );
  const row = r.rows[0];
  const gross = Number(row.gross);
  const refunded = Number(row.refunded);
  return {
    ...row,
    gross,
    refunded,
    net: gross - refunded,
    funnel: f.rows[0] ?? { queued: 0, admitted: 0, held: 0, paid: 0, ticketed: 0 },
  };
}

export const BUCKETS = { '1m': 60, '5m': 300, '15m': 900, '1h': 3600, '1d': 86400 } as const;
export type Bucket = keyof typeof BUCKETS;

export async function salesTimeline(
  pool: pg.Pool,
  tenantId: string,
  eventId: string,
  bucket: Bucket,
  range: { from?: Date; to?: Date } = {},
) {
  const r = await pool.query(
    `SELECT to_timestamp(floor(extract(epoch FROM minute) / $3) * $3) AS at,
            sum(holds)::int AS holds, sum(paid_orders)::int AS "paidOrders",
            sum(seats_sold - seats_refunded)::int AS "seatsSold", sum(gross)::bigint AS gross,
            sum(refunded)::bigint AS refunded, sum(refunds)::int AS refunds, sum(seats_refunded)::int AS "seatsRefunded",
            sum(declines)::int AS declines, sum(expiries)::int AS expiries, sum(cancels)::int AS cancels
       FROM reporting.minutes
      WHERE tenant_id = $1 AND event_id = $2
        AND ($4::timestamptz IS NULL OR minute >= $4) AND ($5::timestamptz IS NULL OR minute < $5)
      GROUP BY 1 ORDER BY 1`,
    [tenantId, eventId, BUCKETS[bucket], range.from ?? null, range.to ?? null],
  );
  return r.rows.map((x) => ({
    ...x,
    at: (x.at as Date).toISOString(),
    gross: Number(x.gross),
    refunded: Number(x.refunded),
  }));
}

/** Sold and held per section and tier from the projections; remaining from the seat map's capacity. */
export async function salesBySection(
  pool: pg.Pool,
  tenantId: string,
  eventId: string,
  capacity: { section: string; tier: string; seats: number }[],
) {
  const r = await pool.query<{ section: string; tier: string; sold: number; held: number }>(
    `SELECT section, tier, sold, held FROM reporting.sections WHERE tenant_id = $1 AND event_id = $2`,
    [tenantId, eventId],
  );
  const key = (s: string, t: string) => `${s}\u0000${t}`;
  const rows = new Map<string, { section: string; tier: string; capacity: number; sold: number; held: number }>();
  for (const c of capacity) rows.set(key(c.section, c.tier), { ...c, capacity: c.seats, sold: 0, held: 0 });
  for (const x of r.rows) {
    const row = rows.get(key(x.section, x.tier)) ?? { section: x.section, tier: x.tier, capacity: 0, sold: 0, held: 0 };
    rows.set(key(x.section, x.tier), { ...row, sold: x.sold, held: x.held });
  }
  return [...rows.values()]
    .map(({ section, tier, capacity: cap, sold, held }) => ({
      section,
      tier,
      capacity: cap,
      sold,
      held,
      remaining: Math.max(0, cap - sold - held),
    }))
    .sort((a, b) => (a.section === b.section ? (a.tier < b.tier ? -1 : 1) : a.section < b.section ? -1 : 1));
}

/** Places (seats and GA places) sold and held per event of a tenant, for its list of events. */
export async function salesByEvent(pool: pg.Pool, tenantId: string, eventIds: string[]) {
  const r = await pool.query<{ eventId: string; sold: number; held: number }>(
    `SELECT event_id AS "eventId", sum(sold)::int AS sold, sum(held)::int AS held
       FROM reporting.sections WHERE tenant_id = $1 AND event_id = ANY($2::uuid[]) GROUP BY 1`,
    [tenantId, eventIds],
  );
  return r.rows;
}

/**
 * Held and sold seat ids from the orders (a held or declined order still holds its seats until they
 * are released; a paid one has sold them). Every other seat is free.
 */
export async function seatStates(pool: pg.Pool, tenantId: string, eventId: string) {
  const r = await pool.query<{ state: 'held' | 'sold'; seat_id: string }>(
    `SELECT CASE WHEN o.status IN ('paid', 'ticketed') THEN 'sold' ELSE 'held' END AS state, s->>'seatId' AS seat_id
       FROM reporting.orders o CROSS JOIN LATERAL jsonb_array_elements(o.seats) s
      WHERE o.tenant_id = $1 AND o.event_id = $2 AND o.status IN ('held', 'declined', 'paid', 'ticketed')`,
    [tenantId, eventId],
  );
  const held: string[] = [];
  const sold: string[] = [];
  for (const row of r.rows) (row.state === 'sold' ? sold : held).push(row.seat_id);
  return { held, sold };
}

/** What settlement and the console's orders page show of an order that took money. */
interface PaidOrderRow {
  order_id: string;
  cell_id: string;
  status: string;
  paid_at: Date;
  currency: string;
  gross: string;
  refunded: string;
  seats: number;
}

/** The places a paid order holds (GA included); none once it is refunded or cancelled. */
const PAID_ORDER_COLUMNS = `order_id, cell_id, status, paid_at, currency, amount AS gross, refunded,
       CASE WHEN status IN ('paid', 'ticketed')
            THEN jsonb_array_length(seats)
                 + coalesce((SELECT sum((g->>'quantity')::int) FROM jsonb_array_elements(ga) g), 0)
            ELSE 0 END::int AS seats`;

/** One line per order that took money: what settlement pays out and takes back, and the places it sold (GA included). */
export async function settlementRows(pool: pg.Pool, tenantId: string, eventId: string) {
  const r = await pool.query<PaidOrderRow>(
    `SELECT ${PAID_ORDER_COLUMNS}
       FROM reporting.orders WHERE tenant_id = $1 AND event_id = $2 AND paid_at IS NOT NULL
      ORDER BY paid_at, order_id`,
    [tenantId, eventId],
  );
  return r.rows;
}

/** The event's orders that took money, newest payment first: the one `orderId` names, or the newest `limit`. */
export async function paidOrders(
  pool: pg.Pool,
  tenantId: string,
  eventId: string,
  o: { orderId?: string; limit: number },
) {
  const r = await pool.query<PaidOrderRow>(
    `SELECT ${PAID_ORDER_COLUMNS}
       FROM reporting.orders
      WHERE tenant_id = $1 AND event_id = $2 AND paid_at IS NOT NULL AND ($3::uuid IS NULL OR order_id = $3::uuid)
      ORDER BY paid_at DESC, order_id LIMIT $4`,
    [tenantId, eventId, o.orderId ?? null, o.limit],
  );
  return r.rows;
}

const csvCell = (v: string) => (/[",\n\r]/.test(v) ? `"${v.replaceAll('"', '""')}"` : v);

export function settlementCsv(rows: Awaited<ReturnType<typeof settlementRows>>): string {
  const lines = [
    ['order_id', 'cell_id', 'status', 'paid_at', 'currency', 'gross', 'refunded', 'net', 'seats'].join(','),
  ];
  let gross = 0;
  let refunded = 0;
  let seats = 0;
  for (const r of rows) {
    const g = Number(r.gross);
    const f = Number(r.refunded);
    gross += g;
    refunded += f;
    seats += r.seats;
    lines.push(
      [r.order_id, r.cell_id, r.status, r.paid_at.toISOString(), r.currency, g, f, g - f, r.seats]
        .map((v) => csvCell(String(v)))
        .join(','),
    );
  }
  lines.push(['TOTAL', '', '', '', rows[0]?.currency ?? '', gross, refunded, gross - refunded, seats].join(','));
  return `${lines.join('\n')}\n`;
}
