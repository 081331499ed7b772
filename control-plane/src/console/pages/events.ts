import { html } from 'hono/html';
import type { EventRow } from '../../db/schema';
import type { ConsoleSession } from '../session';
import { formatInZone, toZonedInput } from '../zoned-time';
import { csrfField, type FieldIssues, field, formError } from './layout';

export interface EventCounts {
  sold: number;
  held: number;
}

const canChange = (s: ConsoleSession) => s.role !== 'viewer';

/**
 * The events page: a page of the tenant's events, newest first, with links to the newest and to older ones. `places`
 * is each event's seats and GA places, what its sold and held places are counted against.
 */
export function eventsList(
  s: ConsoleSession,
  listed: { events: EventRow[]; nextAfter: string | null; first: boolean },
  counts: Map<string, EventCounts>,
  places: Map<string, number>,
) {
  const rows = listed.events;
  const pages = html`<nav class="pages" aria-label="Pages of events">
    ${listed.first ? '' : html`<a href="/console" data-testid="newest-events">Newest events</a>`}
    ${listed.nextAfter ? html`<a href="/console?after=${listed.nextAfter}" data-testid="older-events">Older events</a>` : ''}
  </nav>`;
  return html`<h1>Events</h1>
    ${canChange(s) ? html`<p><a class="button" href="/console/events/new">Create an event</a></p>` : ''}
    ${
      rows.length === 0
        ? html`<p>${listed.first ? 'No events yet.' : 'No older events.'}</p>`
        : html`<div class="table-wrap"><table data-testid="events">
            <caption class="sr-only">Your events</caption>
            <thead><tr><th scope="col">Event</th><th scope="col">Status</th><th scope="col">Onsale (venue time)</th>
              <th scope="col">Cell</th><th scope="col" class="num">Sold</th><th scope="col" class="num">Held</th>
              <th scope="col" class="num">Remaining</th></tr></thead>
            <tbody>
              ${rows.map((e) => {
                const c = counts.get(e.id) ?? { sold: 0, held: 0 };
                return html`<tr>
                  <td><a href="/console/events/${e.id}">${e.name}</a><br /><small>${e.venue}</small></td>
                  <td><span class="status status-${e.status}">${e.status.replace('_', ' ')}</span></td>
                  <td>${formatInZone(e.onsaleAt, e.timeZone)}</td>
                  <td>${e.cellId ?? '—'}</td>
                  <td class="num">${c.sold}</td>
                  <td class="num">${c.held}</td>
                  <td class="num">${Math.max(0, (places.get(e.id) ?? e.seatCount) - c.sold - c.held)}</td>
                </tr>`;
              })}
            </tbody>
          </table></div>`
    }
    ${listed.first && !listed.nextAfter ? '' : pages}`;
}

export interface EventFormValues {
  name?: string;
  venue?: string;
  timeZone?: string;
  startsAt?: string;
  /**
   * The new-event form's own Idempotency-Key, made when the form is first shown: the form sent twice (a double click,
   * a resend after a lost answer) creates one event.
   */
  formKey?: string;
}

export const eventFormValues = (e: EventRow): EventFormValues => ({
  name: e.name,
  venue: e.venue,
  timeZone: e.timeZone,
  startsAt: toZonedInput(e.startsAt, e.timeZone),
});

/** Create (no event) or edit; times are typed in the venue's time zone. */
export function eventForm(o: {
  s: ConsoleSession;
  action: string;
  values: EventFormValues;
  issues?: FieldIssues;
  error?: string | null;
  submit: string;
  readOnly?: boolean;
}) {
  const v = o.values;
  const disabled = o.readOnly;
  return html`<form method="post" action="${o.action}" class="card" data-testid="event-form" novalidate>
    ${formError(o.error)} ${csrfField(o.s)}
    ${v.formKey ? html`<input type="hidden" name="formKey" value="${v.formKey}" />` : ''}
    ${field({ name: 'name', label: 'Name', value: v.name, issues: o.issues, required: true, disabled })}
    ${field({ name: 'venue', label: 'Venue', value: v.venue, issues: o.issues, required: true, disabled })}
    ${field({
      name: 'timeZone',
      label: 'Venue time zone',
      value: v.timeZone ?? 'UTC',
      issues: o.issues,
      hint: 'IANA name, e.g. Europe/Paris',
      disabled,
    })}
    ${field({
      name: 'startsAt',
      label: 'Event starts (venue time)',
      value: v.startsAt,
      type: 'datetime-local',
      issues: o.issues,
      required: true,
      disabled,
    })}
    ${disabled ? '' : html`<button type="submit">${o.submit}</button>`}
  </form>`;
}

export function newEventPage(s: ConsoleSession, values: EventFormValues, issues?: FieldIssues, error?: string | null) {
  return html`<h1>Create an event</h1>
    ${eventForm({ s, action: '/console/events', values, issues, error, submit: 'Create event' })}`;
}
