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
