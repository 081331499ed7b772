import { type SQL, sql } from 'drizzle-orm';
import type { Tx } from '../db/client';
import { DomainError } from '../errors';

// The claim of (user, key) is the first write of the hold's first statement: hold_open (sql/functions/hold_open.sql).

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
