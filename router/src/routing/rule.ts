import type { AdmissionClaims, CellStatus } from '@onsale/contracts';
import type { CellEntry, DirectorySnapshot } from '../directory/directory';

export type Refusal =
  | { code: 'event_not_found'; message: string; details: { eventId: string } }
  | { code: 'admission_invalid'; message: string; details: { reason: 'event' | 'stale_cell' } }
  | { code: 'cell_unavailable'; message: string; details: { cellId: string; status: CellStatus | 'unknown' } };

export type CellRoute = { ok: true; cell: CellEntry; by: 'token' | 'directory' } | ({ ok: false } & Refusal);

/**
 * The rule: which cell an event-scoped buyer request goes to.
 *
 * With a verified admission token, its purchaseCell decides: the token was minted for that cell, and the cell will
 * refuse a token for any other. The directory only overrules it when it knows better: if the directory maps the
 * event to another cell at an epoch the token has not seen (token epoch <= directory epoch), the event moved after
 * the token was minted, or the token contradicts the directory at the same version; either way it is refused with
 * `stale_cell` (403: the buyer needs a fresh token from the waiting room, a retry will not help). A token from a
 * later epoch than the directory's copy means our copy lags an evacuation, so the token is trusted. An event the
 * directory does not list yet (a fresh placement) is routed by the token too.
 *
 * Without a token the directory decides, and an event it does not list is not found.
 *
 * Either way only an active cell gets traffic: draining, down and evacuated cells answer 503 for their events.
 */
export function routeToCell(dir: DirectorySnapshot, eventId: string, claims?: AdmissionClaims): CellRoute {
  const placement = dir.events.get(eventId);
  let cellId: string;
  if (claims) {
    if (claims.eventId !== eventId)
      return refuse('admission_invalid', 'the admission token is for another event', { reason: 'event' });
    if (placement && placement.cellId !== claims.purchaseCell && claims.directoryEpoch <= placement.epoch)
      return refuse('admission_invalid', 'the event has moved since this admission token was minted', {
        reason: 'stale_cell',
      });
    cellId = claims.purchaseCell;
  } else {
    if (!placement) return refuse('event_not_found', 'no cell serves this event', { eventId });
    cellId = placement.cellId;
  }
  const cell = dir.cells.get(cellId);
  if (!cell) return refuse('cell_unavailable', 'the purchase cell is unknown', { cellId, status: 'unknown' });
  if (cell.status !== 'active')
    return refuse('cell_unavailable', `the purchase cell is ${cell.status}`, { cellId, status: cell.status });
  return { ok: true, cell, by: claims ? 'token' : 'directory' };
}

/**
 * Stripe webhooks go to the cell named in the path. A draining cell still takes them: draining means finishing the
 * payments already in flight, and their authorizations arrive as webhooks. Stripe retries a 503 for days.
 */
export function routeWebhook(dir: DirectorySnapshot, cellId: string): CellRoute {
  const cell = dir.cells.get(cellId);
  if (!cell) return refuse('cell_unavailable', 'no such cell', { cellId, status: 'unknown' });
  if (cell.status !== 'active' && cell.status !== 'draining')
    return refuse('cell_unavailable', `the cell is ${cell.status}`, { cellId, status: cell.status });
  return { ok: true, cell, by: 'directory' };
}

function refuse<C extends Refusal['code']>(
  code: C,
  message: string,
  details: Extract<Refusal, { code: C }>['details'],
): CellRoute {
  return { ok: false, code, message, details } as CellRoute;
}
