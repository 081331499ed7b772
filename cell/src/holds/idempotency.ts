import { sql } from 'drizzle-orm';
import type { Tx } from '../db/client';
import { DomainError } from '../errors';

const KEY_TTL = '24 hours';

/**
 * Claims (user, key) for this transaction. A concurrent request with the same key blocks on
 * the unique index until the first transaction ends: if it committed, its stored response is
 * returned (a replay); if it rolled back, this one proceeds as the first. Another body under
 * the same key is a conflict.
 */
export async function claimIdempotencyKey(
  tx: Tx,
  userId: string,
  key: string,
  requestHash: string,
): Promise<unknown | null> {
  const claimed = await tx.execute(sql`
    INSERT INTO idempotency_keys (user_id, key, request_hash, expires_at)
    VALUES (${userId}, ${key}, ${requestHash}, now() + ${KEY_TTL}::interval)
    ON CONFLICT (user_id, key) DO NOTHING`);
  if (claimed.rowCount === 1) return null;

  const prior = await tx.execute<{ request_hash: string; response_body: string | null }>(
    sql`SELECT request_hash, response_body FROM idempotency_keys WHERE user_id = ${userId} AND key = ${key}`,
  );
  const row = prior.rows[0];
  if (!row || row.request_hash !== requestHash) {
    throw new DomainError('idempotency_key_reused', 'this Idempotency-Key was used with a different request', {
      header: 'Idempotency-Key',
    });
  }
  if (row.response_body === null) throw new DomainError('conflict', 'the first request with this key is unfinished');
  return JSON.parse(row.response_body);
}

export async function storeIdempotentResponse(tx: Tx, userId: string, key: string, body: unknown): Promise<void> {
  await tx.execute(sql`
    UPDATE idempotency_keys SET response_status = 202, response_body = ${JSON.stringify(body)}
     WHERE user_id = ${userId} AND key = ${key}`);
}
