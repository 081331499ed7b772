import type { AdmissionClaims, CellStatus } from '@onsale/contracts';
import type { CellEntry, DirectorySnapshot } from '../directory/directory';

export type Refusal =
  | { code: 'event_not_found'; message: string; details: { eventId: string } }
  | { code: 'not_found'; message: string; details: { cellId: string } }
  | { code: 'admission_invalid'; message: string; details: { reason: 'event' | 'stale_cell' } }
  | { code: 'cell_unavailable'; message: string; details: { cellId: string; status: CellStatus | 'unknown' } }
  | { code: 'event_moving'; message: string; details: { eventId: string; cellId: string } }
  | { code: 'admission_cell_moved'; message: string; details: { eventId: string; cellId: string; epoch: number } };

/**
 * What the request does, where it matters: a new hold takes seats, so it must go where the event sells now; anything
 * else (an order read, releasing a hold) concerns an order that lives where it was made.
 */
export type RequestIntent = 'new_hold' | 'order';

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
export function routeToCell(
  dir: DirectorySnapshot,
  eventId: string,
  claims?: AdmissionClaims,
  intent?: RequestIntent,
): CellRoute {
  const placement = dir.events.get(eventId);
  let cellId: string;
  // Evacuation: while the event moves, new holds wait a few seconds; everything else carries on in the source cell.
  if (intent === 'new_hold' && placement?.moving)
    return refuse('event_moving', 'this event is moving to another cell; retry shortly', {
      eventId,
      cellId: placement.cellId,
    });
  if (claims) {
    if (claims.eventId !== eventId)
      return refuse('admission_invalid', 'the admission token is for another event', { reason: 'event' });
    // A token minted for the cell the event has since left (the directory's epoch is newer): a new hold is refused
    // with a reason the buyer's client acts on (fetch the admission again: the waiting room re-issues it for the new
    // cell, place kept), and an order made on the old cell is still read and released there.
    if (intent && placement && placement.cellId !== claims.purchaseCell && claims.directoryEpoch < placement.epoch) {
      if (intent === 'new_hold')
        return refuse('admission_cell_moved', 'the event has moved to another cell; fetch your admission again', {
          eventId,
          cellId: placement.cellId,
          epoch: placement.epoch,
        });
      return toCell(dir, claims.purchaseCell, 'token');
    }
    if (placement && placement.cellId !== claims.purchaseCell && claims.directoryEpoch <= placement.epoch)
      return refuse('admission_invalid', 'the event has moved since this admission token was minted', {
        reason: 'stale_cell',
      });
    cellId = claims.purchaseCell;
  } else {
    if (!placement) return refuse('event_not_found', 'no cell serves this event', { eventId });
    cellId = placement.cellId;
  }
  return toCell(dir, cellId, claims ? 'token' : 'directory');
}

function toCell(dir: DirectorySnapshot, cellId: string, by: 'token' | 'directory'): CellRoute {
  const cell = dir.cells.get(cellId);
  if (!cell) return refuse('cell_unavailable', 'the purchase cell is unknown', { cellId, status: 'unknown' });
  if (cell.status !== 'active')
    return refuse('cell_unavailable', `the purchase cell is ${cell.status}`, { cellId, status: cell.status });
  return { ok: true, cell, by };
}

/**
 * Where else an order of this event may live, after the cell the rule chose answered that it has none: an order stays
 * in the cell that took it, so after a move the buyer's order page (which carries no admission token, or one minted
 * for the new cell) follows the event's trail: the cell it sells in now, then the cells it left, newest first. Only a
 * request without a body follows it (reads, and releasing a hold: the id exists in one cell, so asking another is
 * harmless). A cell on the trail that is out of service ends the walk with 503: the order may be there.
 */
export function orderTrail(dir: DirectorySnapshot, eventId: string, tried: string): CellRoute[] {
  const placement = dir.events.get(eventId);
  if (!placement) return [];
  const ids = [placement.cellId, ...(placement.formerCells ?? [])].filter(
    (id, i, all) => id !== tried && all.indexOf(id) === i,
  );
  return ids.map((id) => {
    const cell = dir.cells.get(id);
    if (!cell) return refuse('cell_unavailable', 'the purchase cell is unknown', { cellId: id, status: 'unknown' });
    // A drained or evacuated cell no longer sells, but it still answers for the orders it took.
    if (cell.status === 'down')
      return refuse('cell_unavailable', 'the cell that took this order is down', { cellId: id, status: cell.status });
    return { ok: true, cell, by: 'directory' } as const;
  });
}

/**
 * Stripe webhooks go to the cell named in the path. A draining cell still takes them: draining means finishing the
 * payments already in flight, and their authorizations arrive as webhooks. Stripe retries a 503 for days.
 * A cell the directory does not list is the caller's mistake (anyone can post to any path), not an outage: 404.
 */
export function routeWebhook(dir: DirectorySnapshot, cellId: string): CellRoute {
  const cell = dir.cells.get(cellId);
  if (!cell) return refuse('not_found', 'no such cell', { cellId });
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
