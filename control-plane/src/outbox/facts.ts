import { randomUUID } from 'node:crypto';
import { type ControlPlaneFactType, controlPlaneFactPayloads } from '@onsale/contracts';
import { sql } from 'drizzle-orm';
import type { z } from 'zod';
import type { Db } from '../db/client';

type Executor = Pick<Db, 'execute'>;
type PayloadOf<T extends ControlPlaneFactType> = Omit<z.infer<(typeof controlPlaneFactPayloads)[T]>, 'tenantId'>;

/**
 * Records a control-plane fact in the outbox with the caller's executor (a transaction when the
 * fact describes a database write). The tenant is read from the event in the same statement,
 * so callers on the waiting-room path pay one round trip, not two.
 */
export async function appendFact<T extends ControlPlaneFactType>(
  db: Executor,
  eventType: T,
  eventId: string,
  payload: PayloadOf<T>,
  occurredAt: Date,
): Promise<void> {
  const factId = randomUUID();
  const schema = controlPlaneFactPayloads[eventType];
  // Validated with a stand-in tenant: the real one is filled in by the insert below.
  schema.parse({ ...payload, tenantId: 'pending' });
  await db.execute(sql`
    INSERT INTO fact_outbox (event_id, aggregate_id, event_type, envelope)
    SELECT ${factId}, e.id, ${eventType},
           jsonb_build_object(
             'eventId', ${factId}::text, 'eventType', ${eventType}::text, 'schemaVersion', 1,
             'aggregateId', e.id::text, 'occurredAt', ${occurredAt.toISOString()}::text, 'source', 'control-plane',
             'payload', ${JSON.stringify(payload)}::jsonb || jsonb_build_object('tenantId', e.tenant_id))
      FROM events e WHERE e.id = ${eventId}`);
}

/**
 * Records many facts of one type in one statement (the waiting room's group commit of joins); each
 * row is the same envelope appendFact writes, in the order given.
 */
export async function appendFacts<T extends ControlPlaneFactType>(
  db: Executor,
  eventType: T,
  facts: { eventId: string; payload: PayloadOf<T>; occurredAt: Date }[],
): Promise<void> {
  if (facts.length === 0) return;
  const schema = controlPlaneFactPayloads[eventType];
  for (const f of facts) schema.parse({ ...f.payload, tenantId: 'pending' });
  const col = <V>(pick: (f: (typeof facts)[number]) => V) => sql.param(facts.map(pick));
  await db.execute(sql`
    INSERT INTO fact_outbox (event_id, aggregate_id, event_type, envelope)
    SELECT f.fact_id, e.id, ${eventType},
           jsonb_build_object(
             'eventId', f.fact_id::text, 'eventType', ${eventType}::text, 'schemaVersion', 1,
             'aggregateId', e.id::text, 'occurredAt', f.occurred_at, 'source', 'control-plane',
             'payload', f.payload || jsonb_build_object('tenantId', e.tenant_id))
      FROM unnest(${col(() => randomUUID())}::uuid[], ${col((f) => f.eventId)}::uuid[],
                  ${col((f) => f.occurredAt.toISOString())}::text[], ${col((f) => JSON.stringify(f.payload))}::jsonb[])
           WITH ORDINALITY AS f(fact_id, event_id, occurred_at, payload, n)
      JOIN events e ON e.id = f.event_id
     ORDER BY f.n`);
}
