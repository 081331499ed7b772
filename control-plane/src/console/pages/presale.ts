import { html } from 'hono/html';
import type { botReport } from '../../bot-report/report';
import type { EventRow } from '../../db/schema';
import type { getPresale } from '../../presale/presale';
import type { ConsoleSession } from '../session';
import { formatInZone, toZonedInput } from '../zoned-time';
import { csrfField, type FieldIssues, field, formError } from './layout';

type Presale = Awaited<ReturnType<typeof getPresale>>;
type BotReport = Awaited<ReturnType<typeof botReport>>;

export interface PresalePageData {
  s: ConsoleSession;
  ev: EventRow;
  presale: Presale | null;
  failed?: { issues?: FieldIssues; error?: string | null; values?: Record<string, string> };
}

const tabs = (ev: EventRow) =>
  html`<nav class="tabs" aria-label="Event">
    <a href="/console/events/${ev.id}">Event</a>
    <a href="/console/events/${ev.id}/presale">Presale</a>
    <a href="/console/events/${ev.id}/bot-report">Bot report</a>
  </nav>`;

/** A count that stands out when a limit refused someone. */
const pct = (x: number) => `${(x * 100).toFixed(1)} %`;

export function presalePage(d: PresalePageData) {
  const { s, ev, presale: p } = d;
  const tz = ev.timeZone;
  const when = (iso: string) => formatInZone(new Date(iso), tz);
  return html`<h1>${ev.name}: presale</h1>
    ${tabs(ev)}
    ${
      p
        ? html`<section aria-labelledby="h-ps"><h2 id="h-ps">Registration and lottery</h2>
      <dl class="facts" data-testid="presale-summary">
        <dt>Registration</dt><dd>${when(p.registrationOpensAt)} to ${when(p.registrationClosesAt)}</dd>
        <dt>Presale</dt><dd>${when(p.presaleStartsAt)} to ${when(p.presaleEndsAt)}; the general sale follows</dd>
        <dt>Invitations</dt><dd>${p.invitations} (waitlist ${p.waitlistSize}; each open ${Math.round(p.invitationTtlSeconds / 60)} min)</dd>
        <dt>Lottery commitment</dt><dd><code>${p.lotteryCommitment}</code> (<a href="/events/${ev.id}/presale/lottery">record</a>)</dd>
        <dt>Drawn</dt><dd data-testid="presale-drawn">${p.drawnAt ? when(p.drawnAt) : 'not yet (the worker draws at the close)'}</dd>
        <dt>Accounts allowed</dt><dd>${p.limits.accountsPerIp} per IP, ${p.limits.accountsPerDevice} per device</dd>
      </dl>
      ${
        s.role !== 'viewer' && !p.drawnAt
          ? html`<form method="post" action="/console/events/${ev.id}/presale/draw" class="inline">${csrfField(s)}
              <button type="submit" data-testid="presale-draw">Draw the lottery now</button></form>`
          : ''
      }
      ${d.failed && !d.failed.values ? formError(d.failed.error) : ''}
    </section>
    ${countsSection(p)} ${conversionSection(p)} ${sourcesSection(p)} ${registrationsSection(p, when)} ${invitationsSection(p, when)}`
        : html`<p data-testid="presale-summary">No presale: buyers join the waiting room without an access code.</p>`
    }
    ${s.role === 'viewer' || p?.drawnAt ? '' : presaleForm(d)}`;
}

function countsSection(p: Presale) {
  const c = p.counts;
  return html`<section aria-labelledby="h-counts"><h2 id="h-counts">Registrations</h2>
    <table data-testid="presale-counts"><tbody>
      <tr><th scope="row">Registered accounts</th><td class="num">${c.registrations}</td></tr>
      <tr><th scope="row">Invited</th><td class="num">${c.invited}</td></tr>
      <tr><th scope="row">On the waitlist</th><td class="num">${c.waitlisted}</td></tr>
      <tr><th scope="row">Not selected</th><td class="num">${c.notSelected}</td></tr>
      <tr><th scope="row">Refused: account already registered</th><td class="num">${c.refusedDuplicate}</td></tr>
      <tr><th scope="row">Refused: too many accounts from one IP</th><td class="num">${c.refusedOverIpLimit}</td></tr>
      <tr><th scope="row">Refused: too many accounts on one device</th><td class="num">${c.refusedOverDeviceLimit}</td></tr>
    </tbody></table></section>`;
}

function conversionSection(p: Presale) {
  const v = p.conversion;
  return html`<section aria-labelledby="h-conv"><h2 id="h-conv">Conversion</h2>
    <p>An invitation is used when its buyer joins the waiting room with the code.</p>
    <table data-testid="presale-conversion"><tbody>
      <tr><th scope="row">Invitations offered</th><td class="num">${v.offered}</td></tr>
      <tr><th scope="row">Open</th><td class="num">${v.open}</td></tr>
      <tr><th scope="row">Used</th><td class="num">${v.used} (${pct(v.rate)})</td></tr>
      <tr><th scope="row">Declined</th><td class="num">${v.declined}</td></tr>
      <tr><th scope="row">Lapsed</th><td class="num">${v.lapsed}</td></tr>
    </tbody></table></section>`;
}

function sourcesSection(p: Presale) {
  if (!p.sources.length) return '';
  return html`<section aria-labelledby="h-src"><h2 id="h-src">Accounts per IP and device</h2>
    <div class="table-wrap"><table data-testid="presale-sources"><thead><tr><th scope="col">Kind</th><th scope="col">IP or device</th>
      <th scope="col" class="num">Accounts</th><th scope="col" class="num">Refused over the limit</th></tr></thead>
    <tbody>${p.sources.map(
      (x) =>
        html`<tr><td>${x.kind}</td><td><code>${x.value}</code></td><td class="num">${x.accounts}</td><td class="num">${x.refused}</td></tr>`,
    )}</tbody></table></div></section>`;
}

function registrationsSection(p: Presale, when: (iso: string) => string) {
  if (!p.registrations.length) return '';
  return html`<section aria-labelledby="h-regs"><h2 id="h-regs">Registered accounts</h2>
    <p>In the draw's order once drawn (the first ${p.registrations.length} shown).</p>
    <div class="table-wrap"><table data-testid="presale-registrations"><thead><tr><th scope="col" class="num">Place</th>
      <th scope="col">Account</th><th scope="col">Outcome</th><th scope="col">IP</th><th scope="col" class="num">Accounts from it</th>
      <th scope="col">Device</th><th scope="col" class="num">Accounts on it</th><th scope="col">Registered</th></tr></thead>
    <tbody>${p.registrations.map(
      (r) =>
        html`<tr><td class="num">${r.drawRank ?? '—'}</td><td>${r.buyer}</td><td>${r.outcome.replace('_', ' ')}</td>
          <td><code>${r.ip}</code></td><td class="num">${r.accountsFromIp}</td><td><code>${r.deviceId}</code></td>
          <td class="num">${r.accountsFromDevice}</td><td>${when(r.registeredAt)}</td></tr>`,
    )}</tbody></table></div></section>`;
}

function invitationsSection(p: Presale, when: (iso: string) => string) {
  if (!p.invitations.length) return '';
  return html`<section aria-labelledby="h-inv"><h2 id="h-inv">Invitations</h2>
    <div class="table-wrap"><table data-testid="presale-invitations"><thead><tr><th scope="col">Account</th><th scope="col">Status</th>
      <th scope="col">From the waitlist</th><th scope="col">Offered</th><th scope="col">Open until</th><th scope="col">Used</th></tr></thead>
    <tbody>${p.invitations.map(
      (i) =>
        html`<tr><td>${i.buyer}</td><td>${i.status}</td><td>${i.fromWaitlistRank ? `place ${i.fromWaitlistRank}` : 'no'}</td>
          <td>${when(i.offeredAt)}</td><td>${when(i.expiresAt)}</td><td>${i.usedAt ? when(i.usedAt) : '—'}</td></tr>`,
    )}</tbody></table></div></section>`;
}

function presaleForm(d: PresalePageData) {
  const { ev, presale: p } = d;
  const tz = ev.timeZone;
  const f = d.failed?.values ? d.failed : undefined;
  const z = (iso: string | undefined) => (iso ? toZonedInput(new Date(iso), tz) : '');
  const v = f?.values ?? {
    registrationOpensAt: z(p?.registrationOpensAt),
    registrationClosesAt: z(p?.registrationClosesAt),
    presaleStartsAt: z(p?.presaleStartsAt),
    presaleEndsAt: z(p?.presaleEndsAt),
    invitations: String(p?.invitations ?? ''),
    waitlistSize: String(p?.waitlistSize ?? 0),
    invitationTtlMinutes: String(Math.round((p?.invitationTtlSeconds ?? 3600) / 60)),
  };
  const dt = (name: string, label: string) =>
    field({ name, label, type: 'datetime-local', value: v[name], issues: f?.issues, required: true });
  return html`<form method="post" action="/console/events/${ev.id}/presale" class="card" data-testid="presale-form" novalidate>
    <h2>${p ? 'Change the presale' : 'Open a presale'} (times in ${tz})</h2>
    <p>The lottery's seed is drawn when you first open registration and its commitment published at once: nobody can choose it after seeing who registered.</p>
    ${formError(f?.error)} ${csrfField(d.s)}
    ${dt('registrationOpensAt', 'Registration opens')} ${dt('registrationClosesAt', 'Registration closes (the lottery draws then)')}
    ${dt('presaleStartsAt', 'Presale starts')} ${dt('presaleEndsAt', 'Presale ends (the general sale follows)')}
    ${field({ name: 'invitations', label: 'Invitations', type: 'number', value: v.invitations, issues: f?.issues, required: true, attrs: html`min="1"` })}
    ${field({ name: 'waitlistSize', label: 'Waitlist size (0: none)', type: 'number', value: v.waitlistSize, issues: f?.issues, attrs: html`min="0"` })}
    ${field({ name: 'invitationTtlMinutes', label: 'An invitation stays open (minutes from the presale start)', type: 'number', value: v.invitationTtlMinutes, issues: f?.issues, attrs: html`min="1"` })}
    <button type="submit">${p ? 'Save presale' : 'Open registration'}</button>
  </form>`;
}

export function botReportPage(ev: EventRow, r: BotReport) {
  const row = (label: string, n: number, testid: string) =>
    html`<tr><th scope="row">${label}</th><td class="num" data-testid="${testid}">${n}</td></tr>`;
  return html`<h1>${ev.name}: bot report</h1>
    ${tabs(ev)}
    <section aria-labelledby="h-pow"><h2 id="h-pow">Proof of work at the door</h2>
      <table><tbody>${row('Challenges issued', r.challenges.issued, 'bot-challenges-issued')}${row('Challenges solved', r.challenges.solved, 'bot-challenges-solved')}</tbody></table>
      <p><small>${r.challenges.note}.</small></p>
    </section>
    <section aria-labelledby="h-joins"><h2 id="h-joins">Refused at the waiting room</h2>
      <table><tbody>
        ${row('Joins refused by the rate limits (per IP, per buyer)', r.joinsRefused.rateLimited, 'bot-joins-rate-limited')}
        ${row('Joins refused during the presale without a valid access code', r.joinsRefused.withoutPresaleCode, 'bot-joins-presale')}
        ${row('Admission tokens revoked for this onsale', r.tokensRevoked, 'bot-tokens-revoked')}
      </tbody></table>
    </section>
    <section aria-labelledby="h-regs"><h2 id="h-regs">Presale registrations refused</h2>
      <table><tbody>
        ${row('Account already registered', r.registrationsRefused.duplicate, 'bot-registrations-duplicate')}
        ${row('Too many accounts from one IP', r.registrationsRefused.overIpLimit, 'bot-registrations-ip')}
        ${row('Too many accounts on one device', r.registrationsRefused.overDeviceLimit, 'bot-registrations-device')}
      </tbody></table>
    </section>
    <section aria-labelledby="h-fair"><h2 id="h-fair">Fairness record</h2>
      ${
        r.fairness
          ? html`<p>Queue shuffle: commitment <code data-testid="bot-fairness-commitment">${r.fairness.commitment}</code>;
              ${r.fairness.revealed ? 'the seed and the signed admission log are published' : 'the seed is published when the room opens'}
              (<a href="${r.fairness.record}">record</a>; anyone checks it with <code>pnpm fairness:verify</code>).</p>`
          : html`<p>No onsale scheduled.</p>`
      }
      ${
        r.lottery
          ? html`<p>Presale lottery: commitment <code>${r.lottery.commitment}</code>;
              ${r.lottery.drawn ? 'drawn, the seed and the signed draw are published' : 'not drawn yet'} (<a href="${r.lottery.record}">record</a>).</p>`
          : ''
      }
    </section>`;
}
