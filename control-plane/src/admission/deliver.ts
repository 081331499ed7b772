import type { RevocationNotice } from '@onsale/contracts';
import { sql } from 'drizzle-orm';
import type { Services } from '../context';

/** A claimed delivery is not claimed again until the call has had time to time out. */
const CLAIM_MS = 10_000;
const RETRY_BASE_MS = 250;
const RETRY_MAX_MS = 30_000;

interface DueDelivery extends Record<string, unknown> {
  revocation_id: string;
  cell_id: string;
  base_url: string;
  attempts: number;
  jti: string | null;
  subject: string | null;
  created_at: Date;
  expires_at: Date;
}

/**
 * Sends the due revocation deliveries (./revoke.ts) to their cells' internal APIs, all cells at once, and records
 * each outcome: delivered, or the next try after a backoff that doubles up to 30 s. A revocation that has expired
 * is not sent (every token it covers has expired too). Returns how many deliveries were tried.
 */
export async function deliverRevocations(ctx: Services, batchSize = 100): Promise<number> {
  const claimed = await ctx.db.execute<DueDelivery>(sql`
    UPDATE revocation_deliveries d
       SET attempts = d.attempts + 1, next_attempt_at = now() + make_interval(secs => ${CLAIM_MS / 1000})
      FROM revocations r, cells c
     WHERE r.id = d.revocation_id AND c.id = d.cell_id
       AND (d.revocation_id, d.cell_id) IN (
             SELECT dd.revocation_id, dd.cell_id FROM revocation_deliveries dd
               JOIN revocations rr ON rr.id = dd.revocation_id
              WHERE dd.delivered_at IS NULL AND dd.next_attempt_at <= now() AND rr.expires_at > now()
              ORDER BY dd.next_attempt_at LIMIT ${batchSize}
                FOR UPDATE OF dd SKIP LOCKED)
    RETURNING d.revocation_id, d.cell_id, c.base_url, d.attempts, r.jti, r.subject, r.created_at, r.expires_at`);
  const due = claimed.rows;
  await Promise.all(
    due.map(async (d) => {
      const notice: RevocationNotice = {
        ...(d.jti ? { jti: d.jti } : { sub: d.subject as string }),
        revokedAt: Math.floor(new Date(d.created_at).getTime() / 1000),
        expiresAt: Math.ceil(new Date(d.expires_at).getTime() / 1000),
      };
      try {
        await ctx.cells.revoke({ id: d.cell_id, baseUrl: d.base_url }, notice);
        await ctx.db.execute(sql`
          UPDATE revocation_deliveries SET delivered_at = now(), last_error = NULL
           WHERE revocation_id = ${d.revocation_id} AND cell_id = ${d.cell_id}`);
      } catch (err) {
        const retryMs = Math.min(RETRY_MAX_MS, RETRY_BASE_MS * 2 ** (d.attempts - 1));
        await ctx.db.execute(sql`
          UPDATE revocation_deliveries
             SET next_attempt_at = now() + make_interval(secs => ${retryMs / 1000}), last_error = ${(err as Error).message}
           WHERE revocation_id = ${d.revocation_id} AND cell_id = ${d.cell_id}`);
        ctx.log.warn('revocation not delivered; retrying', {
          revocationId: d.revocation_id,
          cellId: d.cell_id,
          attempts: d.attempts,
          retryMs,
          err,
        });
      }
    }),
  );
  return due.length;
}
