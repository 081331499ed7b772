import type { Logger } from '@onsale/contracts';
import { sql } from 'drizzle-orm';
import type { CellContext } from '../context';
import { withWriteTx } from '../db/tx';
import { failpoint } from '../failpoints';
import type { CallFirstHandlers, Handler } from '../messaging/consumer-runner';
import type { Mailer } from './mailer';
import { composeNotice, type NoticeKind } from './notices';

/**
 * Another delivery of the same notice holds a live claim (a rebalance handed the order to this worker while the
 * other still sends, or the other died and its lease has not run out yet): retried later, never sent in parallel.
 */
export class NoticeInFlight extends Error {
  override name = 'NoticeInFlight';
}

type Claim = 'claimed' | 'settled' | 'in_flight';

/**
 * Takes the notice's row: a new one, or one whose sender's claim is older than the lease (that sender died between
 * its claim and its record). Committed before the mail server hears of the notice, so no two senders ever hold it.
 */
async function claimNotice(ctx: CellContext, orderId: string, kind: NoticeKind, leaseMs: number): Promise<Claim> {
  return withWriteTx(ctx, async (tx) => {
    const taken = await tx.execute(sql`
      INSERT INTO notifications (order_id, kind, status) VALUES (${orderId}, ${kind}, 'sending')
      ON CONFLICT (order_id, kind) DO UPDATE SET attempts = notifications.attempts + 1, claimed_at = now()
       WHERE notifications.status = 'sending'
         AND notifications.claimed_at < now() - make_interval(secs => ${leaseMs / 1000})
      RETURNING attempts`);
    if (taken.rows.length) return 'claimed';
    const row = await tx.execute<{ status: string }>(
      sql`SELECT status FROM notifications WHERE order_id = ${orderId} AND kind = ${kind}`,
    );
    return row.rows[0]?.status === 'sending' ? 'in_flight' : 'settled';
  });
}

/** Gives the claim up at once after a send that failed, so the retry does not wait out the lease. */
async function releaseClaim(ctx: CellContext, orderId: string, kind: NoticeKind): Promise<void> {
  await withWriteTx(ctx, (tx) =>
    tx.execute(sql`
      UPDATE notifications SET claimed_at = '-infinity'
       WHERE order_id = ${orderId} AND kind = ${kind} AND status = 'sending'`),
  );
}

const settle =
  (orderId: string, kind: NoticeKind, outcome: { sent: string } | { skipped: string }): Handler =>
  async (tx) => {
    await tx.execute(
      'sent' in outcome
        ? sql`UPDATE notifications SET status = 'sent', sent_at = now(), message_id = ${outcome.sent}
               WHERE order_id = ${orderId} AND kind = ${kind} AND status = 'sending'`
        : sql`UPDATE notifications SET status = 'skipped', skipped_reason = ${outcome.skipped}
               WHERE order_id = ${orderId} AND kind = ${kind} AND status = 'sending'`,
    );
  };

const nothing: Handler = async () => {};

/**
 * Sends one notice of one order at most once per (order, kind) in the normal course, whatever the number of
 * deliveries: claim (committed), compose from the ledger, send, then record `sent` in the inbox's transaction.
 *
 * The choice at the one gap SMTP leaves open is at-least-once. SMTP has no idempotency key, so a worker that dies
 * after the server accepted the message and before `sent` commits cannot know it was sent: its claim outlives it,
 * and once the lease runs out the next delivery sends again, with the same Message-ID (a duplicate the buyer's mail
 * client may fold into one; the ticket PDF is the same bytes). The other choice, never resending a claim, would
 * leave a buyer whose worker died a moment before sending with no email at all. A crash anywhere else (before the
 * claim, between claim and send, after `sent`) sends exactly one.
 */
export async function sendNoticeOnce(
  deps: { ctx: CellContext; mailer: Mailer; leaseMs: number; log: Logger },
  orderId: string,
  kind: NoticeKind,
): Promise<Handler> {
  const { ctx, mailer, log } = deps;
  const claim = await claimNotice(ctx, orderId, kind, deps.leaseMs);
  if (claim === 'settled') return nothing;
  if (claim === 'in_flight')
    throw new NoticeInFlight(`notice ${kind} of order ${orderId} is being sent by another delivery`);
  const composed = await composeNotice(ctx.db, ctx.cellId, orderId, kind);
  if ('skipped' in composed) {
    log.warn('notice not sent', { orderId, kind, reason: composed.skipped });
    return settle(orderId, kind, { skipped: composed.skipped });
  }
  failpoint('notifications.before-send');
  try {
    await mailer.send(composed.mail);
  } catch (err) {
    await releaseClaim(ctx, orderId, kind);
    throw err;
  }
  failpoint('notifications.after-send');
  // Who, what and which order; never the body or the tickets.
  log.info('notice sent', {
    orderId,
    kind,
    messageId: composed.mail.messageId,
    attachments: composed.mail.attachments.length,
  });
  return settle(orderId, kind, { sent: composed.mail.messageId });
}

/**
 * The events a buyer hears about: tickets issued, money refunded, a payment cancelled (an authorization released,
 * or an intent cancelled before the buyer completed it: the event does not say which, so the notice is worded for both).
 */
export function notificationHandlers(deps: Parameters<typeof sendNoticeOnce>[0]): CallFirstHandlers {
  return {
    TicketIssued: { callFirst: (event) => sendNoticeOnce(deps, event.payload.orderId, 'order_confirmation') },
    Refunded: { callFirst: (event) => sendNoticeOnce(deps, event.payload.orderId, 'refund') },
    AuthorizationCanceled: { callFirst: (event) => sendNoticeOnce(deps, event.payload.orderId, 'cancellation') },
  };
}
