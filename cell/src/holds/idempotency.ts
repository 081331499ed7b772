import { type SQL, sql } from 'drizzle-orm';
import type { Tx } from '../db/client';
import { DomainError } from '../errors';

const KEY_TTL = '24 hours';

/**
 * The claim of (user, key) for this transaction, as a statement for the hold's first round trip;
 * it returns a row only when this request is the first with the key. A concurrent request with
 * the same key blocks on the unique index until the first transaction ends: if it committed, its
 * stored response is replayed (priorResponse); if it rolled back, this one proceeds as the first.
 */
export const claimKey = (userId: string, key: string, requestHash: string): SQL => sql`
    INSERT INTO idempotency_keys (user_id, key, request_hash, expires_at)
    VALUES (${userId}, ${key}, ${requestHash}, now() + ${KEY_TTL}::interval)
    ON CONFLICT (user_id, key) DO NOTHING RETURNING true AS claimed`;

/** The response stored under a key this request did not claim; another body under the same key is a conflict. */
export async function priorResponse(tx: Tx, userId: string, key: string, requestHash: string): Promise<unknown> {
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

/** The response to replay under the claimed key, stored by the statement that writes the hold. */
export const storeResponse = (userId: string, key: string, body: unknown): SQL => sql`
    UPDATE idempotency_keys SET response_status = 202, response_body = ${JSON.stringify(body)}
     WHERE user_id = ${userId} AND key = ${key}`;
