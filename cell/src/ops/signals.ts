import type { CellSignals } from '@onsale/contracts';
import { sql } from 'drizzle-orm';
import type { CellContext } from '../context';
import type { LatencyWindow } from './latency';

export interface SignalSources {
  holdLatency: LatencyWindow;
  writeLatency: LatencyWindow;
  /** Messages the cell's consumer groups have yet to process, summed over partitions; null when the broker did not say. */
  consumerLag: () => Promise<number | null>;
}

/** What the cell's own tables say now: lock waits, connections, outbox age, holds, seats left per event. */
export async function readLedgerFigures(ctx: CellContext) {
  const db = ctx.database.db;
  const [stats, seats] = await Promise.all([
    db.execute<{
      lock_waits: number;
      connections: number;
      max_connections: number;
      outbox_age_ms: number | null;
      outbox_waiting: number;
      active_holds: number;
      expiry_delay_ms: number | null;
    }>(sql`
      SELECT (SELECT count(*)::int FROM pg_locks l JOIN pg_database d ON d.oid = l.database
               WHERE NOT l.granted AND d.datname = current_database()) AS lock_waits,
             (SELECT count(*)::int FROM pg_stat_activity) AS connections,
             current_setting('max_connections')::int AS max_connections,
             (SELECT extract(epoch FROM now() - min(created_at)) * 1000 FROM outbox WHERE published_at IS NULL)::float8 AS outbox_age_ms,
             (SELECT count(*)::int FROM outbox WHERE published_at IS NULL) AS outbox_waiting,
             (SELECT count(*)::int FROM holds WHERE status = 'active') AS active_holds,
             (SELECT extract(epoch FROM now() - min(expires_at)) * 1000 FROM holds
               WHERE status = 'active' AND expires_at < now())::float8 AS expiry_delay_ms`),
    // Places buyers could still take: free seats (a refunded order's voided tickets no longer
    // occupy theirs) plus free general-admission places, so returns re-open the waiting room.
    db.execute<{ event_id: string; available: number }>(sql`
      SELECT e.id AS event_id,
             (SELECT count(*) FROM seats s WHERE s.event_id = e.id
                 AND NOT EXISTS (SELECT 1 FROM hold_seats hs WHERE hs.seat_id = s.id AND hs.released_at IS NULL)
                 AND NOT EXISTS (SELECT 1 FROM tickets t WHERE t.seat_id = s.id AND t.voided_at IS NULL))::int
           + (SELECT coalesce(sum(g.remaining), 0) FROM ga_areas a JOIN ga_stripes g ON g.area_id = a.id
               WHERE a.event_id = e.id)::int AS available
        FROM events e`),
  ]);
  const s = stats.rows[0]!;
  const available: Record<string, number> = {};
  for (const row of seats.rows) available[row.event_id] = row.available;
  return {
    lockWaits: s.lock_waits,
    connectionUse: Math.min(1, s.connections / s.max_connections),
    outboxAgeMs: s.outbox_age_ms ?? 0,
    outboxWaiting: s.outbox_waiting,
    activeHolds: s.active_holds,
    expiryDelayMs: s.expiry_delay_ms ?? 0,
    availableSeats: available,
  };
}

/** Reads the figures the release controller steers by, from the database and this process. */
export async function readSignals(ctx: CellContext, sources: SignalSources): Promise<CellSignals> {
  const [{ outboxWaiting: _waiting, ...ledger }, lag] = await Promise.all([
    readLedgerFigures(ctx),
    sources.consumerLag(),
  ]);
  return {
    cellId: ctx.cellId,
    measuredAt: new Date().toISOString(),
    holdLatencyP99Ms: sources.holdLatency.percentile(99),
    commitLatencyP99Ms: sources.writeLatency.percentile(99),
    consumerLag: lag,
    ...ledger,
  };
}
