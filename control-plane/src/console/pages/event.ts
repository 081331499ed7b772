import { MAX_SEATS_PER_HOLD } from '@onsale/contracts';
import { html } from 'hono/html';
import type { EventRow } from '../../db/schema';
import type { SeatMapIssue } from '../../events/seat-map-parse';
import type { getOnsale } from '../../onsale/status';
import type { ConsoleSession } from '../session';
import { formatInZone, toZonedInput } from '../zoned-time';
import { type EventFormValues, eventForm, eventFormValues } from './events';
import { counted, csrfField, type FieldIssues, field, formError, money } from './layout';

type Onsale = Awaited<ReturnType<typeof getOnsale>>;

export interface EventPageData {
  s: ConsoleSession;
  ev: EventRow;
  tiers: { code: string; name: string; price: number; currency: string }[];
  sections: { section: string; tier: string; seats: number }[];
  onsale: Onsale | null;
  decisions: { at: string; oldRate: number; newRate: number; reason: string; actor: string }[];
  /** A failed form, shown where it was submitted. */
  failed?: {
    form: 'event' | 'seat-map' | 'onsale' | 'control';
    issues?: FieldIssues;
    seatIssues?: SeatMapIssue[];
    total?: number;
    error?: string | null;
    values?: Record<string, string>;
  };
}

const editable = (ev: EventRow) => ev.status === 'draft' || ev.status === 'scheduled';

export function eventPage(d: EventPageData) {
  const { s, ev } = d;
  const viewer = s.role === 'viewer';
  const f = d.failed;
  return html`<h1>${ev.name}</h1>
    <p class="meta">
      <span class="status status-${ev.status}" data-testid="event-status">${ev.status.replace('_', ' ')}</span>
      · ${ev.venue} · starts ${formatInZone(ev.startsAt, ev.timeZone)} · cell ${ev.cellId ?? 'not placed yet'}
    </p>
    <nav class="tabs" aria-label="Event">
      <a href="/console/events/${ev.id}/live">Live view</a>
      <a href="/console/events/${ev.id}/presale">Presale</a>
      <a href="/console/events/${ev.id}/orders">Orders and refunds</a>
      <a href="/console/events/${ev.id}/bot-report">Bot report</a>
      <a href="/console/events/${ev.id}/settlement.csv" download>Settlement (CSV)</a>
    </nav>

    <section aria-labelledby="h-details"><h2 id="h-details">Details</h2>
      ${eventForm({
        s,
        action: `/console/events/${ev.id}`,
        values: f?.form === 'event' ? (f.values as EventFormValues) : eventFormValues(ev),
        issues: f?.form === 'event' ? f.issues : undefined,
        error: f?.form === 'event' ? f.error : null,
        submit: 'Save changes',
        readOnly: viewer || !editable(ev),
      })}
    </section>

    <section aria-labelledby="h-tiers"><h2 id="h-tiers">Price tiers</h2>
      ${
        d.tiers.length
          ? html`<table data-testid="tiers"><thead><tr><th scope="col">Code</th><th scope="col">Name</th><th scope="col" class="num">Price</th></tr></thead>
            <tbody>${d.tiers.map((t) => html`<tr><td>${t.code}</td><td>${t.name}</td><td class="num">${money(t.price, t.currency)}</td></tr>`)}</tbody></table>`
          : html`<p>Tiers come with the seat map (JSON <code>tiers</code>, or CSV <code>price</code> and <code>currency</code> columns).</p>`
      }
    </section>

    <section aria-labelledby="h-map"><h2 id="h-map">Seat map</h2>
      <p>${counted(ev.seatCount, 'seat')} in ${counted(new Set(d.sections.map((x) => x.section)).size, 'section')} (version ${ev.seatMapVersion}).</p>
      ${ev.seatCount ? html`<div class="seatmap" data-seatmap="${ev.id}" data-live="${ev.id}"><canvas role="img" aria-label="Seat map coloured by available, held and sold"></canvas>${legend()}</div>` : ''}
      ${viewer || !editable(ev) ? '' : seatMapForm(d)}
    </section>

    <section aria-labelledby="h-onsale"><h2 id="h-onsale">Onsale</h2>
      ${onsaleSummary(d)}
      ${viewer ? '' : onsaleControls(d)}
      ${viewer || !editable(ev) ? '' : scheduleForm(d)}
      <h3>Release controller decisions</h3>
      ${decisionsTable(d.decisions)}
    </section>`;
}

export const legend = () =>
  html`<ul class="legend"><li><span class="sw available"></span>available</li><li><span class="sw held"></span>held</li><li><span class="sw sold"></span>sold</li></ul>`;

function seatMapForm(d: EventPageData) {
  const f = d.failed?.form === 'seat-map' ? d.failed : undefined;
  return html`<form method="post" action="/console/events/${d.ev.id}/seat-map" enctype="multipart/form-data" class="card" data-testid="seat-map-form">
    ${csrfField(d.s)}
    <div class="field ${f?.issues?.file ? 'has-error' : ''}">
      <label for="f-file">Upload a seat map (CSV or JSON, up to 100,000 seats)</label>
      <input id="f-file" name="file" type="file" accept=".csv,.json,text/csv,application/json" required />
      <small>CSV columns: section,row,seat (or label),tier,price,currency. The current map stays until an upload is valid.</small>
      ${f?.issues?.file ? html`<p class="field-error" data-field="file">${f.issues.file}</p>` : ''}
    </div>
    <button type="submit">Upload seat map</button>
    ${formError(f?.error)}
    ${
      f?.seatIssues?.length
        ? html`<div class="table-wrap"><table class="issues" data-testid="seat-map-issues">
            <caption>${f.total} problem(s); nothing was stored${(f.total ?? 0) > f.seatIssues.length ? `, the first ${f.seatIssues.length} shown` : ''}.</caption>
            <thead><tr><th scope="col">Row</th><th scope="col">Line</th><th scope="col">Field</th><th scope="col">Problem</th></tr></thead>
            <tbody>${f.seatIssues.map(
              (i) =>
                html`<tr><td>${i.row ?? '—'}</td><td>${i.line ?? '—'}</td><td><code>${i.field}</code></td><td>${i.message}</td></tr>`,
            )}</tbody></table></div>`
        : ''
    }
  </form>`;
}

function onsaleSummary(d: EventPageData) {
  const o = d.onsale;
  if (!o) return html`<p data-testid="onsale-summary">Not scheduled.</p>`;
  const tz = d.ev.timeZone;
  return html`<dl class="facts" data-testid="onsale-summary">
    <dt>Waiting room opens</dt><dd>${formatInZone(new Date(o.roomOpensAt), tz)}</dd>
    <dt>Onsale opens</dt><dd>${formatInZone(new Date(o.onsaleAt), tz)}</dd>
    <dt>Seats per buyer</dt><dd>${o.perBuyerLimit}</dd>
    <dt>Release rate</dt><dd>${o.release.mode === 'paused' ? 'paused' : `${o.release.rate.toFixed(1)}/s`} (ceiling ${o.maxReleaseRate}/s)</dd>
    <dt>Loaded into ${o.load.cellId ?? d.ev.cellId ?? 'cell'}</dt><dd>${o.ready ? 'yes' : `${o.load.status}${o.load.lastError ? `: ${o.load.lastError}` : ''}`}</dd>
    <dt>Waiting now</dt><dd>${o.room.waiting}</dd>
  </dl>`;
}

function onsaleControls(d: EventPageData) {
  const { ev } = d;
  const f = d.failed?.form === 'control' ? d.failed : undefined;
  const button = (verb: string, label: string) =>
    html`<form method="post" action="/console/events/${ev.id}/onsale/${verb}" class="inline">${csrfField(d.s)}<button type="submit">${label}</button></form>`;
  return html`<div class="controls">
    ${formError(f?.error)}
    ${ev.status === 'on_sale' || ev.status === 'sold_out' ? button('pause', 'Pause onsale') : ''}
    ${ev.status === 'paused' ? button('resume', 'Resume onsale') : ''}
    ${ev.status === 'scheduled' ? html`<a class="button danger" href="/console/events/${ev.id}/onsale/cancel">Cancel onsale…</a>` : ''}
  </div>`;
}

function scheduleForm(d: EventPageData) {
  const { ev, onsale } = d;
  const f = d.failed?.form === 'onsale' ? d.failed : undefined;
  const tz = ev.timeZone;
  const v = f?.values ?? {
    onsaleAt: onsale ? toZonedInput(new Date(onsale.onsaleAt), tz) : '',
    roomOpensAt: onsale ? toZonedInput(new Date(onsale.roomOpensAt), tz) : '',
    perBuyerLimit: String(onsale?.perBuyerLimit ?? 4),
    maxReleaseRate: String(onsale?.maxReleaseRate ?? 50),
  };
  return html`<form method="post" action="/console/events/${ev.id}/onsale" class="card" data-testid="onsale-form" novalidate>
    <h3>${onsale ? 'Reschedule' : 'Schedule'} (times in ${tz})</h3>
    ${formError(f?.error)} ${csrfField(d.s)}
    ${field({ name: 'onsaleAt', label: 'Onsale opens', type: 'datetime-local', value: v.onsaleAt, issues: f?.issues, required: true })}
    ${field({ name: 'roomOpensAt', label: 'Waiting room opens (blank: with the onsale)', type: 'datetime-local', value: v.roomOpensAt, issues: f?.issues })}
    ${field({ name: 'perBuyerLimit', label: 'Seats per buyer', type: 'number', value: v.perBuyerLimit, issues: f?.issues, required: true, attrs: html`min="1" max="${MAX_SEATS_PER_HOLD}"` })}
    ${field({ name: 'maxReleaseRate', label: 'Release-rate ceiling (buyers per second)', type: 'number', value: v.maxReleaseRate, issues: f?.issues, required: true, attrs: html`min="1"` })}
    ${f?.issues?.seatMap ? html`<p class="field-error" data-field="seatMap">${f.issues.seatMap}</p>` : ''}
    <button type="submit">${onsale ? 'Save schedule' : 'Schedule onsale'}</button>
  </form>`;
}

export function decisionsTable(rows: { at: string; oldRate: number; newRate: number; reason: string }[]) {
  if (!rows.length) return html`<p>No decisions yet.</p>`;
  return html`<div class="table-wrap"><table data-testid="decisions"><thead><tr><th scope="col">At</th><th scope="col" class="num">From</th><th scope="col" class="num">To</th><th scope="col">Why</th></tr></thead>
    <tbody>${rows.map((r) => html`<tr><td>${new Date(r.at).toISOString().slice(11, 19)}Z</td><td class="num">${r.oldRate.toFixed(1)}</td><td class="num">${r.newRate.toFixed(1)}</td><td>${r.reason}</td></tr>`)}</tbody></table></div>`;
}

export function cancelConfirmPage(s: ConsoleSession, ev: EventRow) {
  return html`<h1>Cancel the onsale of ${ev.name}?</h1>
    <p>The schedule is removed and the event goes back to draft; its seat map is kept. Buyers already waiting lose their place.</p>
    <form method="post" action="/console/events/${ev.id}/onsale/cancel" class="inline">
      ${csrfField(s)}<button type="submit" class="danger">Yes, cancel the onsale</button>
    </form>
    <a class="button" href="/console/events/${ev.id}">No, keep it</a>`;
}
