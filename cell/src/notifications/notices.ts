import { sql } from 'drizzle-orm';
import type { Db } from '../db/client';
import { loadOrderTickets } from '../tickets/documents';
import { renderTicketsPdf } from '../tickets/pdf';
import type { Mail } from './mailer';

/** What a buyer is told about an order, once each (the notifications table's kinds). */
export type NoticeKind = 'order_confirmation' | 'refund' | 'cancellation';

/** The message a notice goes out as, or why it cannot go out at all (then it is recorded as skipped, not retried). */
export type Composed = { mail: Mail } | { skipped: 'no_address' | 'no_order' | 'tickets_voided' };

/** One Message-ID per (order, notice): a resend after a crash is the same message to the buyer's mail client. */
export const noticeMessageId = (orderId: string, kind: NoticeKind, cellId: string) =>
  `<${kind}.${orderId}@${cellId}.onsale.invalid>`;

const money = (amount: number, currency: string) =>
  new Intl.NumberFormat('en', { style: 'currency', currency: currency.toUpperCase() }).format(amount / 100);

const when = (d: Date) => d.toUTCString().replace(' GMT', ' UTC');

/**
 * Composes a notice from the ledger as it is now. The confirmation carries the order's tickets as the PDF
 * the buyer also downloads (cell/src/tickets/pdf.ts), rendered here from the same committed rows, so it
 * does not wait on the ticket worker's upload and needs no access to the tickets bucket.
 */
export async function composeNotice(db: Db, cellId: string, orderId: string, kind: NoticeKind): Promise<Composed> {
  const found = await db.execute<{
    buyer_email: string | null;
    amount: number;
    currency: string;
    event_name: string;
    starts_at: Date;
  }>(sql`
    SELECT o.buyer_email, o.amount, o.currency, e.name AS event_name, e.starts_at
      FROM orders o JOIN events e ON e.id = o.event_id
     WHERE o.id = ${orderId}`);
  const order = found.rows[0];
  if (!order) return { skipped: 'no_order' };
  if (!order.buyer_email) return { skipped: 'no_address' };
  const base = { to: order.buyer_email, messageId: noticeMessageId(orderId, kind, cellId) };
  const event = `${order.event_name}, ${when(new Date(order.starts_at))}`;
  switch (kind) {
    case 'order_confirmation': {
      const tickets = await loadOrderTickets(db, orderId);
      if (!tickets) return { skipped: 'no_order' };
      // Voided before the confirmation went out (the event was cancelled): the refund notice says what happened.
      if (tickets.voided.length) return { skipped: 'tickets_voided' };
      const count = tickets.document.tickets.length;
      return {
        mail: {
          ...base,
          subject: `Your tickets: ${order.event_name}`,
          text: [
            `Thank you for your order ${orderId}.`,
            `${event}`,
            `Paid: ${money(order.amount, order.currency)}.`,
            `Your ${count === 1 ? 'ticket is' : `${count} tickets are`} attached as a PDF; each page has the QR code the door scans.`,
          ].join('\n\n'),
          attachments: [
            {
              filename: `tickets-${orderId}.pdf`,
              contentType: 'application/pdf',
              content: await renderTicketsPdf(tickets.document),
            },
          ],
        },
      };
    }
    case 'refund':
      return {
        mail: {
          ...base,
          subject: `Your refund: ${order.event_name}`,
          text: [
            `Your order ${orderId} was refunded.`,
            `${event}`,
            `${money(order.amount, order.currency)} is on its way back to the card you paid with; your bank may take a few days to show it. The order's tickets no longer admit anyone.`,
          ].join('\n\n'),
          attachments: [],
        },
      };
    case 'cancellation':
      return {
        mail: {
          ...base,
          subject: `Your order was cancelled: ${order.event_name}`,
          text: [
            `Your order ${orderId} was cancelled before its payment was completed: you have not been charged.`,
            `${event}`,
            'If your bank reserved the amount for this order, that reservation has been released; your bank may take a few days to show it.',
          ].join('\n\n'),
          attachments: [],
        },
      };
  }
}
