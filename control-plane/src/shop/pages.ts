import { html } from 'hono/html';
import type { readCatalogPage } from '../catalog/catalog';
import { counted, type Html, money } from '../console/pages/layout';
import { formatInZone } from '../console/zoned-time';

export type CatalogPage = Awaited<ReturnType<typeof readCatalogPage>>['doc'];

/** Words a buyer reads for each public sale status. */
const SALE_STATUS = {
  scheduled: 'Not on sale yet',
  on_sale: 'On sale now',
  paused: 'Sale paused',
  sold_out: 'Sold out',
} as const;

/**
 * Every buyer page: the event or page name, a plain navigation, and the one script. `data-page` tells the script
 * which page it runs on; `data-*` on the body carry the ids it needs (never a secret).
 */
export function shopLayout(o: { title: string; page: string; data?: Record<string, string>; body: Html }) {
  const attrs = Object.entries(o.data ?? {})
    .map(([k, v]) => html` data-${k}="${v}"`)
    .reduce((a, b) => html`${a}${b}`, html``);
  return html`<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8" />
    <meta name="viewport" content="width=device-width, initial-scale=1" />
    <title>${o.title} · Onsale tickets</title>
    <link rel="stylesheet" href="/shop/assets/shop.css" />
    <script type="module" src="/shop/assets/shop.js"></script>
  </head>
  <body data-page="${o.page}"${attrs}>
    <a class="skip" href="#main">Skip to content</a>
    <header class="top">
      <a class="brand" href="/shop/orders">Onsale tickets</a>
      <nav aria-label="Main"><a href="/shop/orders">My orders</a> <span class="who" data-testid="who"></span>
        <button type="button" class="sign-out" data-testid="sign-out" hidden>Sign out</button></nav>
    </header>
    <main id="main">${o.body}</main>
  </body>
</html>`;
}

function tierTable(ev: CatalogPage) {
  return html`<table data-testid="tiers">
    <caption>Prices per ticket</caption>
    <thead><tr><th scope="col">Tier</th><th scope="col">Price</th><th scope="col">Service fee</th><th scope="col">You pay</th></tr></thead>
    <tbody>
      ${ev.tiers.map(
        (t) => html`<tr data-tier="${t.code}">
          <th scope="row"><span class="swatch tier-${t.code}" aria-hidden="true"></span>${t.name}</th>
          <td>${money(t.price, t.currency)}</td>
          <td>${t.fees === 'included' ? html`${money(t.fee, t.currency)} included` : html`+ ${money(t.fee, t.currency)}`}</td>
          <td>${money(t.buyerPays, t.currency)}</td>
        </tr>`,
      )}
    </tbody>
  </table>`;
}

export function eventPage(ev: CatalogPage) {
  const when = formatInZone(new Date(ev.startsAt), ev.timeZone);
  const selling = ev.saleStatus === 'on_sale' || ev.saleStatus === 'scheduled' || ev.saleStatus === 'paused';
  return html`<article>
    <h1>${ev.name}</h1>
    <p class="lead">${ev.venue} · <time datetime="${ev.startsAt}">${when}</time></p>
    <p>Sale: <strong data-testid="sale-status">${SALE_STATUS[ev.saleStatus]}</strong>${
      ev.onsaleAt
        ? html` · opens <time datetime="${ev.onsaleAt}">${formatInZone(new Date(ev.onsaleAt), ev.timeZone)}</time>`
        : ''
    }</p>
    ${tierTable(ev)}
    <h2>Where you can sit</h2>
    <ul class="sections">
      ${ev.sections.map((s) => html`<li>Section ${s.section}: ${counted(s.seats, 'seat')}</li>`)}
      ${ev.gaAreas.map((a) => html`<li>${a.name}: standing, ${counted(a.capacity, 'place')}</li>`)}
    </ul>
    ${
      selling
        ? html`<p><a class="button" data-testid="join" href="/shop/events/${ev.eventId}/queue">Join the waiting room</a>
            <a data-testid="presale-link" href="/shop/events/${ev.eventId}/presale">Presale registration</a></p>`
        : html`<p role="status">Tickets for this event are sold out.</p>`
    }
  </article>`;
}

/** Registration for an onsale's presale lottery, and after the draw the outcome (filled in by the script). */
export function presalePage(ev: CatalogPage) {
  return html`<h1>${ev.name}: presale</h1>
    <p>Register once for the presale draw. After registration closes, a lottery anyone can check picks who is invited;
      an invitation comes with an access code for your account, used when you join the waiting room.</p>
    <section class="card" aria-labelledby="presale-h">
      <h2 id="presale-h">Your presale</h2>
      <p class="state" role="status" aria-live="polite" data-testid="presale-state">Loading your presale…</p>
      <p class="problem" role="alert" data-testid="presale-problem"></p>
      <p><button type="button" class="button" data-testid="presale-register" hidden>Register for the presale</button></p>
      <p data-testid="presale-code-line" hidden>Your access code: <strong data-testid="presale-code"></strong></p>
      <p><a class="button" data-testid="presale-join" href="/shop/events/${ev.eventId}/queue" hidden>Join the waiting room</a></p>
    </section>`;
}

export function queuePage(ev: CatalogPage) {
  return html`<h1>${ev.name}: waiting room</h1>
    <p>Keep this page open. Your place is kept if you refresh or lose your connection for a moment.</p>
    <section class="card" aria-labelledby="place-h">
      <h2 id="place-h">Your place</h2>
      <dl class="place">
        <div><dt>Position</dt><dd data-testid="position">…</dd></div>
        <div><dt>People ahead of you</dt><dd data-testid="ahead">…</dd></div>
        <div><dt>Estimated wait</dt><dd data-testid="estimate">…</dd></div>
      </dl>
      <p class="state" role="status" aria-live="polite" data-testid="queue-state">Joining the waiting room…</p>
      <p class="problem" role="alert" data-testid="queue-problem"></p>
      <p><a class="button" data-testid="choose-seats" href="/shop/events/${ev.eventId}/seats" hidden>Choose your seats</a></p>
    </section>`;
}

export function seatsPage(ev: CatalogPage) {
  return html`<h1>${ev.name}: choose your seats</h1>
    <p class="problem" role="alert" data-testid="seat-problem"></p>
    <div class="picker">
      <section aria-labelledby="map-h" class="map-card">
        <h2 id="map-h">Seat map</h2>
        <p class="hint">Select seats on the map (Tab to a seat, Space to select). Grey seats are taken.</p>
        <div data-testid="seat-map" class="map" aria-busy="true">Loading the seat map…</div>
        <p class="legend"><span class="swatch free" aria-hidden="true"></span> free
          <span class="swatch chosen" aria-hidden="true"></span> your choice
          <span class="swatch taken" aria-hidden="true"></span> taken</p>
      </section>
      <section aria-labelledby="basket-h" class="basket">
        <h2 id="basket-h">Your selection</h2>
        ${tierTable(ev)}
        ${
          ev.gaAreas.length
            ? html`<fieldset><legend>Standing areas</legend>
              ${ev.gaAreas.map(
                (a) => html`<div class="field"><label for="ga-${a.id}">${a.name}</label>
                  <input id="ga-${a.id}" type="number" min="0" max="8" value="0" inputmode="numeric" data-ga-area="${a.id}" data-tier="${a.tier}" /></div>`,
              )}
            </fieldset>`
            : ''
        }
        <ul data-testid="selection" class="selection"></ul>
        <p>Total: <strong data-testid="total">${money(0, ev.tiers[0]?.currency ?? 'eur')}</strong></p>
        <button type="button" data-testid="hold" disabled>Hold these seats</button>
      </section>
    </div>`;
}

export function orderPage(ev: CatalogPage) {
  return html`<h1>${ev.name}: your order</h1>
    <ol class="progress" data-testid="progress" aria-label="Order progress">
      <li data-step="held">Seats held</li>
      <li data-step="payment">Payment</li>
      <li data-step="paid">Paid</li>
      <li data-step="ticketed">Tickets issued</li>
    </ol>
    <p class="state" role="status" aria-live="polite" data-testid="order-state">Loading your order…</p>
    <p class="problem" role="alert" data-testid="order-problem"></p>
    <section class="card" data-testid="summary" aria-labelledby="summary-h">
      <h2 id="summary-h">Your seats</h2>
      <ul data-testid="order-seats"></ul>
      <p>Total: <strong data-testid="order-total"></strong></p>
    </section>
    <form class="card" data-testid="checkout" hidden>
      <h2>Pay</h2>
      <fieldset>
        <legend>Card (test mode)</legend>
        <div><input type="radio" id="card-visa" name="card" value="pm_card_visa" checked /> <label for="card-visa">Visa ending 4242</label></div>
        <div><input type="radio" id="card-declined" name="card" value="pm_card_chargeDeclined" /> <label for="card-declined">Card ending 0002 (declined)</label></div>
      </fieldset>
      <button type="submit" data-testid="pay">Pay</button>
    </form>
    <section class="card" data-testid="tickets" aria-labelledby="tickets-h" hidden>
      <h2 id="tickets-h">Your tickets</h2>
      <p><a data-testid="tickets-pdf" href="#">Download tickets (PDF)</a></p>
      <ul class="tickets" data-testid="ticket-list"></ul>
    </section>`;
}

export function ordersPage() {
  return html`<h1>My orders</h1>
    <p class="state" role="status" aria-live="polite" data-testid="orders-state">Loading your orders…</p>
    <table data-testid="orders" hidden>
      <caption>Your orders, newest first</caption>
      <thead><tr><th scope="col">Event</th><th scope="col">Date</th><th scope="col">Status</th><th scope="col">Total</th><th scope="col">Ordered</th></tr></thead>
      <tbody></tbody>
    </table>
    <p><button type="button" data-testid="older-orders" hidden>Show older orders</button></p>`;
}

export function signedInPage(token: string, next: string) {
  // The token goes to the script through an attribute of this one page (no-store), which keeps it in the
  // browser's storage and replaces this page in the history.
  return html`<p role="status">Signed in. Taking you back…</p>
    <div hidden data-buyer-token="${token}" data-next="${next}"></div>`;
}

/** Where signing out lands: nothing of the buyer's is left in this browser, and signing in again is one step. */
export function signedOutPage() {
  return html`<h1>You're signed out</h1>
    <p role="status" data-testid="signed-out">You're signed out. Nothing of your account is kept in this browser.</p>
    <p><a class="button" href="/shop/auth/login?next=/shop/orders">Sign in again</a></p>`;
}

export function problemPage(status: number, message: string) {
  return html`<h1>${status === 404 ? 'Not found' : 'Something went wrong'}</h1>
    <p class="problem" role="alert">${message}</p>
    <p><a href="/shop/orders">Go to my orders</a></p>`;
}
