import { html } from 'hono/html';
import type { HtmlEscapedString } from 'hono/utils/html';
import type { ConsoleSession } from '../session';

export type Html = HtmlEscapedString | Promise<HtmlEscapedString>;

/** A field's problems from a 400: `{ path, message }` as every route of the control plane reports them. */
export type FieldIssues = Record<string, string>;

export function layout(o: { title: string; session: ConsoleSession | null; body: Html; notice?: string | null }) {
  const s = o.session;
  return html`<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8" />
    <meta name="viewport" content="width=device-width, initial-scale=1" />
    <title>${o.title} · Onsale console</title>
    <link rel="stylesheet" href="/console/assets/console.css" />
    ${s ? html`<meta name="csrf-token" content="${s.csrf}" />` : ''}
    <script type="module" src="/console/assets/console.js"></script>
  </head>
  <body>
    <a class="skip" href="#main">Skip to content</a>
    <header class="top">
      <a class="brand" href="/console">Onsale console</a>
      ${
        s
          ? html`<nav aria-label="Main">
              <a href="/console">Events</a>
              <a href="/console/team">Team</a>
              <span class="who" data-testid="who">${s.sub} · ${s.role}</span>
              <form method="post" action="/console/auth/sign-out" class="inline">
                <input type="hidden" name="_csrf" value="${s.csrf}" />
                <button type="submit">Sign out</button>
              </form>
            </nav>`
          : ''
      }
    </header>
    <main id="main">
      ${o.notice ? html`<p class="notice" role="status">${o.notice}</p>` : ''}
      ${o.body}
    </main>
  </body>
</html>`;
}

export const csrfField = (s: ConsoleSession) => html`<input type="hidden" name="_csrf" value="${s.csrf}" />`;

/** A labelled input with its server-side error (if any) tied to it for screen readers. */
export function field(o: {
  name: string;
  label: string;
  value?: string | number | null;
  type?: string;
  issues?: FieldIssues;
  required?: boolean;
  hint?: string;
  attrs?: Html;
  disabled?: boolean;
}) {
  const err = o.issues?.[o.name];
  const id = `f-${o.name}`;
  return html`<div class="field ${err ? 'has-error' : ''}">
    <label for="${id}">${o.label}</label>
    <input id="${id}" name="${o.name}" type="${o.type ?? 'text'}" value="${o.value ?? ''}"
      ${o.required ? html`required` : ''} ${o.disabled ? html`disabled` : ''}
      ${err ? html`aria-invalid="true" aria-describedby="${id}-error"` : ''} ${o.attrs ?? ''} />
    ${o.hint ? html`<small>${o.hint}</small>` : ''}
    ${err ? html`<p class="field-error" id="${id}-error" data-field="${o.name}">${err}</p>` : ''}
  </div>`;
}

export const formError = (message: string | null | undefined) =>
  message ? html`<p class="form-error" role="alert">${message}</p>` : '';

/** "1 seat", "20,000 seats": a count with its noun, as the pages write them. */
export const counted = (n: number, noun: string) => `${n.toLocaleString('en-GB')} ${noun}${n === 1 ? '' : 's'}`;

export function money(minor: number, currency = 'EUR') {
  try {
    return new Intl.NumberFormat('en-GB', { style: 'currency', currency: currency.toUpperCase() }).format(minor / 100);
  } catch {
    return `${(minor / 100).toFixed(2)} ${currency}`;
  }
}
