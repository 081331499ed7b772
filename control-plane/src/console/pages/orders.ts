import { html } from 'hono/html';
import type { EventRow } from '../../db/schema';
import type { getPaidOrders } from '../../reporting/sales';
import type { ConsoleSession } from '../session';
import { formatInZone } from '../zoned-time';
import { counted, csrfField, type FieldIssues, field, formError, money } from './layout';

type PaidOrder = Awaited<ReturnType<typeof getPaidOrders>>[number];

export interface OrdersPageData {
  s: ConsoleSession;
  ev: EventRow;
  /** The newest paid orders, or the one asked for. */
  orders: PaidOrder[];
  /** The order id the promoter looked up, if any (shown back in the search field). */
  asked?: string;
  /** Just refunded from this page: its form is not offered again while the figures catch up. */
  refundRequested?: boolean;
  /** A refund the cell refused, or a reason the form lacked: the looked-up order's page shows it. */
  failed?: { orderId: string; reason: string; issues: FieldIssues; error: string };
}

/** What a promoter may still do with a paid order: the cell refunds only these. */
const REFUNDABLE = new Set(['paid', 'ticketed']);
const STATUS: Record<string, string> = {
  paid: 'paid',
  ticketed: 'tickets issued',
  refunding: 'refund requested',
  refunded: 'refunded',
  canceled: 'cancelled',
};

/**
 * An event's paid orders as customer service looks for them: by the order id a buyer quotes (from the confirmation
 * mail or "my orders"), or among the newest payments; each refundable one with a refund form asking why.
 */
export function ordersPage(d: OrdersPageData) {
  const { s, ev } = d;
  const canRefund = s.role !== 'viewer';
  const lookedUp = d.asked !== undefined;
  // The list links each refundable order to its own page, where the refund form is.
  const refundColumn = canRefund && !lookedUp;
  return html`<h1>${ev.name}: orders</h1>
    <p class="meta"><a href="/console/events/${ev.id}">Back to the event</a> ·
      <a href="/console/events/${ev.id}/settlement.csv" download>Every paid order (settlement CSV)</a></p>
    <form method="get" action="/console/events/${ev.id}/orders" class="card" data-testid="order-search">
      ${field({ name: 'order', label: 'Order id', value: d.asked, hint: 'As the buyer quotes it, from their confirmation or "my orders".' })}
      <button type="submit">Find the order</button>
    </form>
    ${formError(d.failed && !Object.keys(d.failed.issues).length ? d.failed.error : null)}
    <h2>${lookedUp ? 'The order' : 'Newest payments'}</h2>
    ${
      d.orders.length
        ? html`<p>${lookedUp ? '' : `${counted(d.orders.length, 'order')}, newest payment first. `}Sales figures follow the cells within seconds.</p>
          <table data-testid="orders"><thead><tr><th scope="col">Order</th><th scope="col">Paid at</th><th scope="col">Status</th>
            <th scope="col" class="num">Places</th><th scope="col" class="num">Amount</th><th scope="col" class="num">Refunded</th>
            ${refundColumn ? html`<th scope="col">Refund</th>` : ''}</tr></thead>
          <tbody>${d.orders.map(
            (o) => html`<tr data-order="${o.order_id}"><td><code>${o.order_id}</code></td>
              <td>${formatInZone(o.paid_at, 'UTC')}</td>
              <td data-testid="order-status">${STATUS[o.status] ?? o.status}</td>
              <td class="num">${o.seats}</td><td class="num">${money(Number(o.gross), o.currency)}</td>
              <td class="num">${money(Number(o.refunded), o.currency)}</td>
              ${refundColumn ? html`<td>${REFUNDABLE.has(o.status) ? html`<a href="/console/events/${ev.id}/orders?order=${o.order_id}">Refund…</a>` : ''}</td>` : ''}</tr>`,
          )}</tbody></table>
          ${lookedUp && canRefund && !d.refundRequested && REFUNDABLE.has(d.orders[0]!.status) ? refundForm(d, d.orders[0]!.order_id) : ''}`
        : html`<p data-testid="no-orders">${lookedUp ? 'No paid order of this event has that id.' : 'No paid orders yet.'}</p>`
    }`;
}

/** One order's refund, on the page that looked it up. */
function refundForm(d: OrdersPageData, orderId: string) {
  const failed = d.failed?.orderId === orderId ? d.failed : undefined;
  return html`<form method="post" action="/console/events/${d.ev.id}/orders/${orderId}/refund" class="card" data-testid="refund">
    <h3>Refund order <code>${orderId}</code></h3>
    ${csrfField(d.s)}
    ${field({ name: 'reason', label: 'Why (kept with the refund)', value: failed?.reason, issues: failed?.issues, required: true, attrs: html`maxlength="200"` })}
    <p>Its tickets stop admitting at once; its seats return to sale when Stripe confirms the refund.</p>
    <button type="submit" class="danger">Refund this order</button>
  </form>`;
}
