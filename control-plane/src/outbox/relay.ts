import { CONTROL_PLANE_FACTS_TOPIC, type Logger, pollingLoop } from '@onsale/contracts';
import type { Broker } from '@onsale/messaging/broker';
import type pg from 'pg';

export interface FactRelayOptions {
  batchSize: number;
  leaseMs: number;
  idleMs: number;
  /** After every batch that succeeded, empty ones included (readiness). */
  onPass?: () => void;
}

/**
 * Publishes the fact outbox in id order: claim a batch with a lease (SKIP LOCKED, so two relays
 * never claim the same rows), commit the claim, publish with acks=all, then mark the rows sent.
 * A crash after publishing and before marking republishes the batch: a duplicate (same fact id,
 * which reporting dedupes), never a loss.
 */
export function createFactRelay(pool: pg.Pool, broker: Pick<Broker, 'publish'>, log: Logger, opts: FactRelayOptions) {
  async function once(): Promise<number> {
    const claimed = await pool.query<{ id: string; aggregate_id: string; envelope: unknown }>(
      `UPDATE fact_outbox SET lease_until = now() + make_interval(secs => $2::double precision / 1000)
        WHERE id IN (SELECT id FROM fact_outbox
                      WHERE published_at IS NULL AND (lease_until IS NULL OR lease_until < now())
                      ORDER BY id LIMIT $1 FOR UPDATE SKIP LOCKED)
        RETURNING id, aggregate_id, envelope`,
      [opts.batchSize, opts.leaseMs],
    );
    if (claimed.rows.length === 0) return 0;
    const rows = claimed.rows.sort((a, b) => Number(a.id) - Number(b.id));
    await broker.publish(
      CONTROL_PLANE_FACTS_TOPIC,
      rows.map((r) => ({ key: r.aggregate_id, value: JSON.stringify(r.envelope) })),
    );
    await pool.query('UPDATE fact_outbox SET published_at = now() WHERE id = ANY($1::bigint[])', [
      rows.map((r) => r.id),
    ]);
    return rows.length;
  }

  return {
    once,
    /** A full batch is followed at once by the next; an empty one waits `idleMs`; a failed one backs off. */
    start: () =>
      pollingLoop({
        name: 'fact relay batch',
        log,
        intervalMs: opts.idleMs,
        pass: async () => ((await once()) > 0 ? 0 : undefined),
        onSuccess: opts.onPass,
      }),
  };
}
