import { randomUUID } from 'node:crypto';
import { type Envelope, metrics, pollingLoop, SpanKind, startSpanFrom } from '@onsale/contracts';
import { sql } from 'drizzle-orm';
import type { CellContext } from '../context';
import { withWriteTx } from '../db/tx';
import { failpoint } from '../failpoints';
import type { Broker } from '../messaging/broker';

export interface RelayOptions {
  batchSize: number;
  leaseMs: number;
  idleMs: number;
  /** Published rows are kept this long for inspection, then deleted. */
  retainPublishedMs: number;
  /** Called after every pass that reached both the database and the broker (readiness). */
  onPass?: () => void;
}

type Claimed = {
  id: number;
  topic: string;
  aggregate_id: string;
  envelope: Envelope;
};

/**
 * The outbox relay. It claims a batch of unpublished rows under a lease (SKIP LOCKED, so
 * relays never wait on each other) and commits the claim, publishes with acks from all
 * in-sync replicas, then marks the rows published only if the lease is still its own. A crash
 * after publishing and before marking re-publishes the batch later: a duplicate the inboxes
 * absorb, never a loss.
 */
export function createRelay(ctx: CellContext, broker: Broker, options: RelayOptions) {
  const relayId = randomUUID();
  let lastCleanup = 0;

  async function claim(owner: string): Promise<Claimed[]> {
    return withWriteTx(ctx, async (tx) => {
      const rows = await tx.execute<Claimed>(sql`
        UPDATE outbox SET lease_owner = ${owner}, lease_until = now() + make_interval(secs => ${options.leaseMs / 1000})
         WHERE id IN (SELECT id FROM outbox
                       WHERE published_at IS NULL AND (lease_until IS NULL OR lease_until < now())
                       ORDER BY id LIMIT ${options.batchSize} FOR UPDATE SKIP LOCKED)
        RETURNING id, topic, aggregate_id, envelope`);
      return rows.rows.sort((a, b) => a.id - b.id);
    });
  }

  /** Publishes one batch; returns how many rows it published. */
  async function publishOnce(): Promise<number> {
    const owner = `${relayId}:${randomUUID()}`;
    const timer = metrics.relayBatch.startTimer();
    const rows = await claim(owner);
    if (rows.length === 0) return 0;
    const byTopic = new Map<string, Claimed[]>();
    for (const r of rows) byTopic.set(r.topic, [...(byTopic.get(r.topic) ?? []), r]);
    for (const [topic, batch] of byTopic) {
      // One span per row, child of the span that wrote it; the consumer's span becomes its child.
      const spans = batch.map((r) =>
        startSpanFrom(`relay.publish ${r.envelope.eventType}`, r.envelope.traceparent, {
          kind: SpanKind.PRODUCER,
          attributes: { 'messaging.destination.name': topic, 'onsale.event_id': r.envelope.eventId },
        }),
      );
      try {
        await broker.publish(
          topic,
          batch.map((r, i) => ({
            key: r.aggregate_id,
            value: JSON.stringify(spans[i] ? { ...r.envelope, traceparent: spans[i].traceparent } : r.envelope),
            headers: { eventType: r.envelope.eventType, correlationId: r.envelope.correlationId },
          })),
        );
        for (const s of spans) s?.end();
      } catch (err) {
        for (const s of spans) s?.end(err);
        throw err;
      }
    }
    failpoint('relay.after-publish');
    await ctx.db.execute(sql`
      UPDATE outbox SET published_at = now(), lease_owner = NULL, lease_until = NULL
       WHERE id = ANY(${sql.param(rows.map((r) => r.id))}::bigint[]) AND lease_owner = ${owner}`);
    timer();
    metrics.relayPublished.inc(rows.length);
    return rows.length;
  }

  async function cleanup(): Promise<void> {
    if (Date.now() - lastCleanup < 60_000) return;
    lastCleanup = Date.now();
    await ctx.db.execute(sql`
      DELETE FROM outbox WHERE id IN (
        SELECT id FROM outbox WHERE published_at < now() - make_interval(secs => ${options.retainPublishedMs / 1000})
         LIMIT 10000)`);
  }

  return {
    publishOnce,
    /** Publishes until stopped: at once while batches come back full, every `idleMs` otherwise. */
    start: () =>
      pollingLoop({
        name: 'relay batch',
        log: ctx.log.child({ relayId }),
        intervalMs: options.idleMs,
        onSuccess: options.onPass,
        pass: async () => {
          if ((await publishOnce()) === options.batchSize) return 0;
          await cleanup();
        },
      }),
  };
}

/** The business's event-delivery latency: how long the oldest unpublished fact has waited. */
export async function oldestUnpublishedAgeMs(ctx: CellContext): Promise<number> {
  const rows = await ctx.db.execute<{ age: number | null }>(
    sql`SELECT (extract(epoch FROM now() - min(created_at)) * 1000)::float8 AS age FROM outbox WHERE published_at IS NULL`,
  );
  return rows.rows[0]?.age ?? 0;
}
