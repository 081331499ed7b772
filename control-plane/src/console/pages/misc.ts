import { html } from 'hono/html';
import type { EventRow } from '../../db/schema';
import type { ConsoleSession } from '../session';
import { legend } from './event';

export const signInPage = (configured: boolean) =>
  html`<h1>Promoter console</h1>
    ${
      configured
        ? html`<p>Sign in with your organisation's identity provider.</p><p><a class="button" href="/console/auth/login" data-testid="sign-in">Sign in</a></p>`
        : html`<p role="alert">Sign-in is not configured on this control plane (CONSOLE_OIDC_ISSUER_URL).</p>`
    }`;

export const errorPage = (status: number, message: string) =>
  html`<h1>${status === 404 ? 'Not found' : status === 403 ? 'Not allowed' : status === 401 ? 'Signed out' : 'Something went wrong'}</h1>
    <p data-testid="error-message">${message}</p><p><a href="/console">Back to your events</a></p>`;

/** Tiles, charts and the map are filled by the bundled script from the event's server-sent stream. */
export function livePage(ev: EventRow) {
  const tile = (key: string, label: string) =>
    html`<div class="tile"><span class="label">${label}</span><span class="value" data-stat="${key}">—</span></div>`;
  return html`<h1>${ev.name}: live</h1>
    <p class="meta"><a href="/console/events/${ev.id}">Back to the event</a> · <span data-live-state aria-live="polite">connecting…</span></p>
    <div class="live" data-live="${ev.id}" data-testid="live">
      <div class="tiles">
        ${tile('waiting', 'Queue length')} ${tile('admittedPerMin', 'Admitted / min')} ${tile('rate', 'Release rate / s')}
        ${tile('holdsPerSec', 'Holds / s')} ${tile('paidOrders', 'Paid orders')} ${tile('seatsSold', 'Seats sold')}
        ${tile('revenue', 'Revenue')} ${tile('expiries', 'Expiries')} ${tile('declines', 'Declines')}
      </div>
      <div class="charts">
        <figure><figcaption>Queue and admissions</figcaption><div data-chart="room"></div></figure>
        <figure><figcaption>Holds/s and paid orders</figcaption><div data-chart="sales"></div></figure>
        <figure><figcaption>Revenue</figcaption><div data-chart="revenue"></div></figure>
      </div>
      <h2>Conversion funnel</h2><div data-funnel></div>
      <h2>Sold and remaining per section</h2><div data-sections></div>
      <h2>Seat map</h2>
      <div class="seatmap" data-seatmap="${ev.id}"><canvas role="img" aria-label="Seat map coloured by available, held and sold"></canvas>${legend()}</div>
      <h2>Release controller</h2><div data-decisions></div>
    </div>`;
}

export function teamPage(s: ConsoleSession, members: { sub: string; role: string; lastSignIn: string }[]) {
  return html`<h1>Team</h1>
    <p>Members of your organisation who have signed in, with the role your identity provider gives them. A viewer sees everything and changes nothing; roles are managed in the identity provider.</p>
    <table data-testid="team"><thead><tr><th scope="col">Member</th><th scope="col">Role</th><th scope="col">Last sign-in</th></tr></thead>
    <tbody>${members.map((m) => html`<tr><td>${m.sub}${m.sub === s.sub ? ' (you)' : ''}</td><td>${m.role}</td><td>${m.lastSignIn.slice(0, 16).replace('T', ' ')} UTC</td></tr>`)}</tbody></table>`;
}
