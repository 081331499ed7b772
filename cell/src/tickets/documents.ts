import { bySeatPlace, type Logger, naturalCompare } from '@onsale/contracts';
import { sql } from 'drizzle-orm';
import { decodeJwt } from 'jose';
import type { Db, Tx } from '../db/client';
import { failpoint } from '../failpoints';
import type { Handlers } from '../messaging/consumer-runner';
import { type OrderTicketsDocument, renderTicketsPdf, type TicketPlace } from './pdf';
import type { VoidListSigner } from './signing';
import type { TicketStore } from './store';

export interface OrderTickets {
  eventId: string;
  userId: string;
  document: OrderTicketsDocument;
  /** Ids of the order's tickets that no longer admit anyone. */
  voided: string[];
}

/**
 * An order's tickets as they are printed: the ticket rows (a seat's section, row and label, or a GA
 * area's name and the ticket's unit number) and the event. Null while the order has no tickets.
 * The ticket row is read as JSON so a cell whose ledger predates GA columns reads the same way.
 */
export async function loadOrderTickets(db: Db | Tx, orderId: string): Promise<OrderTickets | null> {
  const rows = await db.execute<{
    t: {
      id: string;
      event_id: string;
      user_id: string;
      token: string;
      issued_at: string;
      voided_at: string | null;
      ga_area_id?: string | null;
      unit_no?: number | null;
    };
    section: string | null;
    row: string | null;
    label: string | null;
  }>(sql`
    SELECT to_jsonb(t) AS t, s.section, s.row, s.label
      FROM tickets t LEFT JOIN seats s ON s.id = t.seat_id
     WHERE t.order_id = ${orderId}
     ORDER BY t.id`);
  const first = rows.rows[0];
  if (!first) return null;
  const areaIds = [...new Set(rows.rows.map((r) => r.t.ga_area_id).filter((id): id is string => Boolean(id)))];
  const areaNames = new Map<string, string>();
  if (areaIds.length) {
    const areas = await db.execute<{ id: string; name: string }>(
      sql`SELECT id, name FROM ga_areas WHERE id = ANY(${sql.param(areaIds)}::uuid[])`,
    );
    for (const a of areas.rows) areaNames.set(a.id, a.name);
  }
  const event = await db.execute<{ name: string; starts_at: Date }>(
    sql`SELECT name, starts_at FROM events WHERE id = ${first.t.event_id}`,
  );
  const place = (r: (typeof rows.rows)[number]): TicketPlace =>
    r.t.ga_area_id
      ? { kind: 'area', area: areaNames.get(r.t.ga_area_id) ?? 'General admission', unit: r.t.unit_no ?? null }
      : { kind: 'seat', section: r.section ?? '', row: r.row ?? '', label: r.label ?? '' };
  const issuedAt = new Date(Math.max(...rows.rows.map((r) => Date.parse(r.t.issued_at))));
  return {
    eventId: first.t.event_id,
    userId: first.t.user_id,
    voided: rows.rows.filter((r) => r.t.voided_at !== null).map((r) => r.t.id),
    document: {
      orderId,
      event: { name: event.rows[0]?.name ?? '', startsAt: new Date(event.rows[0]?.starts_at ?? 0) },
      issuedAt,
      tickets: rows.rows
        .map((r) => ({ ticketId: r.t.id, token: r.t.token, place: place(r) }))
        .sort((a, b) => byPlace(a.place, b.place)),
    },
  };
}

/** Tickets as they are printed: seats as a buyer reads them on the map, then standing places by area and unit. */
function byPlace(a: TicketPlace, b: TicketPlace): number {
  if (a.kind === 'seat' && b.kind === 'seat') return bySeatPlace(a, b);
  if (a.kind === 'area' && b.kind === 'area')
    return naturalCompare(a.area, b.area) || naturalCompare(String(a.unit ?? ''), String(b.unit ?? ''));
  return a.kind === 'seat' ? -1 : 1;
}

/**
 * Publishes the event's signed void list: every voided ticket of the event, read now. Callers hold
 * the event's advisory lock for the rest of their transaction, so two publishers for one event take
 * turns and the one that writes last read last: a list is never replaced by an older one.
 */
export async function publishVoidList(
  tx: Tx,
  deps: { store: TicketStore; signVoids: VoidListSigner; cellId: string },
  eventId: string,
): Promise<number> {
  await tx.execute(sql`SELECT pg_advisory_xact_lock(hashtext(${`ticket-voids:${eventId}`}))`);
  const voided = await tx.execute<{ id: string }>(
    sql`SELECT id FROM tickets WHERE event_id = ${eventId} AND voided_at IS NOT NULL ORDER BY id`,
  );
  const list = await deps.signVoids({ eventId, cell: deps.cellId, voided: voided.rows.map((r) => r.id) });
  await deps.store.put(deps.store.keys.voidList(eventId), list, 'application/jwt');
  return voided.rows.length;
}

/**
 * The ticket worker's second half: once an order's tickets are issued (TicketIssued, published by
 * the outbox in the issuing transaction), its PDF is rendered and stored. The handler runs inside the
 * consumer's inbox transaction, so a crash anywhere between issuing and the upload replays it, and a
 * replay finds the stored PDF (or renders the same bytes: the document is a pure function of the
 * committed rows). Voids (an event cancelled: RefundRequested is written in the voiding transaction)
 * republish the event's void list for door scanners.
 */
export function documentHandlers(deps: {
  store: TicketStore;
  signVoids: VoidListSigner;
  cellId: string;
  log: Logger;
}): Handlers {
  return {
    async TicketIssued(tx, { payload }) {
      const tickets = await loadOrderTickets(tx, payload.orderId);
      if (!tickets) return;
      const key = deps.store.keys.orderPdf(tickets.eventId, payload.orderId);
      if (!(await deps.store.exists(key))) {
        failpoint('tickets.before-pdf-upload');
        await deps.store.put(key, await renderTicketsPdf(tickets.document), 'application/pdf');
        deps.log.info('tickets pdf stored', { orderId: payload.orderId, tickets: tickets.document.tickets.length });
      }
      // A scanner must be able to tell "nothing voided" from "no list": the first order of an event publishes one.
      if (!(await deps.store.exists(deps.store.keys.voidList(tickets.eventId))))
        await publishVoidList(tx, deps, tickets.eventId);
    },
    RefundRequested: (tx, { payload }) => republishIfVoided(tx, deps, payload.orderId),
    // A refund that returns seats may void the tickets only once Stripe confirms it.
    Refunded: (tx, { payload }) => republishIfVoided(tx, deps, payload.orderId),
  };
}

async function republishIfVoided(
  tx: Tx,
  deps: { store: TicketStore; signVoids: VoidListSigner; cellId: string; log: Logger },
  orderId: string,
) {
  const voided = await tx.execute<{ id: string; event_id: string }>(
    sql`SELECT id, event_id FROM tickets WHERE order_id = ${orderId} AND voided_at IS NOT NULL`,
  );
  const eventId = voided.rows[0]?.event_id;
  if (!eventId) return;
  // A cancel voids its orders in batches and each gets a RefundRequested: the first republish lists the whole
  // batch, so the others find their tickets listed already and skip the rebuild and the upload.
  const stored = await deps.store.get(deps.store.keys.voidList(eventId));
  if (stored) {
    const listed = new Set(decodeJwt<{ voided?: string[] }>(new TextDecoder().decode(stored)).voided ?? []);
    if (voided.rows.every((t) => listed.has(t.id))) return;
  }
  const count = await publishVoidList(tx, deps, eventId);
  deps.log.info('void list published', { eventId, orderId, voided: count });
}
