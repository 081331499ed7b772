import { randomUUID } from 'node:crypto';
import type { EventLoad } from '@onsale/contracts';
import { decodePDFRawStream, PDFArray, PDFDocument, type PDFPage, PDFRawStream } from 'pdf-lib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestCell, type TestCell } from '../../test/support/cell';
import { startIdentity, type TestIdentity } from '../../test/support/identity';
import { eventLoad, loadIntoCell } from '../../test/support/seed';
import { placeHold } from '../src/holds/place-hold';
import { getOrder } from '../src/orders/get-order';
import { loadOrderTickets } from '../src/tickets/documents';
import { renderTicketsPdf } from '../src/tickets/pdf';
import { ticketIdFor } from '../src/tickets/signing';

/*
 * What a ticket says it admits to, read from the ledger as the worker reads it: a seat's section,
 * row and label, or a GA area's name and the ticket's unit number (tickets.ga_area_id, unit_no).
 * The text is read back out of the rendered PDF's content streams.
 */

let identity: TestIdentity;
let cell: TestCell;
let event: EventLoad;
const floor = randomUUID();
const tiers: NonNullable<EventLoad['tiers']> = [
  { code: 'seated', name: 'Seated', price: 5_000, currency: 'eur', fee: 0, fees: 'included' },
  { code: 'ga', name: 'Standing', price: 4_000, currency: 'eur', fee: 0, fees: 'included' },
];

beforeAll(async () => {
  identity = await startIdentity();
  cell = await startTestCell(identity);
  const base = eventLoad(4, { name: 'Floor and Stalls', tiers });
  event = await loadIntoCell(cell, {
    ...base,
    seats: base.seats.map((s) => ({ ...s, tier: 'seated' })),
    gaAreas: [{ id: floor, name: 'Floor', capacity: 100, tier: 'ga' }],
  });
});
afterAll(async () => {
  await cell?.close();
  await identity?.close();
});

/** The text a page draws: pdf-lib writes standard-font strings as hex of their WinAnsi bytes. */
function pageText(page: PDFPage): string {
  const contents = page.node.Contents();
  const streams = contents instanceof PDFArray ? contents.asArray().map((r) => page.doc.context.lookup(r)) : [contents];
  let text = '';
  for (const s of streams) {
    if (!(s instanceof PDFRawStream)) continue;
    const ops = Buffer.from(decodePDFRawStream(s).decode()).toString('latin1');
    for (const m of ops.matchAll(/<([0-9A-Fa-f]*)>\s*Tj/g)) text += `${Buffer.from(m[1]!, 'hex').toString('latin1')}\n`;
  }
  return text;
}

describe('ticket places on the PDF', () => {
  it('a seat prints its section, row and label; a GA ticket its area and unit number', async () => {
    const seat = event.seats[0]!;
    const userId = `fan-${randomUUID()}`;
    const { body } = await placeHold(cell.api.services.ctx, {
      eventId: event.eventId,
      userId,
      idempotencyKey: randomUUID(),
      seatIds: [seat.id],
      correlationId: randomUUID(),
    });
    const orderId = body.orderId as string;
    // The rows the ticket worker writes: one for the seat, one for unit 17 of the floor.
    await cell.db.query(
      `INSERT INTO tickets (id, order_id, event_id, seat_id, user_id, token) VALUES ($1, $2, $3, $4, $5, 'seat.token.sig')`,
      [ticketIdFor(orderId, seat.id), orderId, event.eventId, seat.id, userId],
    );
    await cell.db.query(
      `INSERT INTO tickets (id, order_id, event_id, ga_area_id, unit_no, user_id, token)
       VALUES ($1, $2, $3, $4, 17, $5, 'ga.token.sig')`,
      [ticketIdFor(orderId, `${floor}:17`), orderId, event.eventId, floor, userId],
    );

    const loaded = await loadOrderTickets(cell.api.services.ctx.db, orderId);
    expect(loaded!.document.tickets.map((t) => t.place)).toEqual([
      { kind: 'seat', section: seat.section, row: seat.row, label: seat.label },
      { kind: 'area', area: 'Floor', unit: 17 },
    ]);

    const pdf = await PDFDocument.load(await renderTicketsPdf(loaded!.document));
    const pages = pdf.getPages().map(pageText);
    expect(pages).toHaveLength(2);
    expect(pages[0]).toContain('Floor and Stalls');
    expect(pages[0]).toContain(`Section ${seat.section} · Row ${seat.row} · Seat ${seat.label}`);
    expect(pages[1]).toContain('Floor · No. 17');
    expect(pages[1]).not.toContain('Section');
  });

  it("an order's seats and tickets read as a buyer reads the map: 2 before 10, seats before standing places", async () => {
    // Labels a code-unit sort misorders ("10" < "2"), under random ids, so neither the ids' order nor the text's
    // is the one a buyer reads.
    const place = (section: string, row: string, seat: string) => ({
      id: randomUUID(),
      label: `${section}-${row}-${seat}`,
      section,
      row,
      price: 5_000,
      currency: 'eur',
      tier: 'seated',
    });
    const seats = [place('10', '1', '1'), place('2', '10', '1'), place('2', '2', '10'), place('2', '2', '9')];
    const stalls = await loadIntoCell(cell, {
      ...eventLoad(0, { name: 'Stalls', tiers }),
      seats,
      gaAreas: [{ id: randomUUID(), name: 'Floor', capacity: 10, tier: 'ga' }],
    });
    const area = stalls.gaAreas![0]!.id;
    const userId = `fan-${randomUUID()}`;
    const { body } = await placeHold(cell.api.services.ctx, {
      eventId: stalls.eventId,
      userId,
      idempotencyKey: randomUUID(),
      seatIds: seats.map((s) => s.id),
      ga: [{ areaId: area, quantity: 1 }],
      correlationId: randomUUID(),
    });
    const orderId = body.orderId as string;
    for (const seat of seats)
      await cell.db.query(
        `INSERT INTO tickets (id, order_id, event_id, seat_id, user_id, token) VALUES ($1, $2, $3, $4, $5, 't')`,
        [ticketIdFor(orderId, seat.id), orderId, stalls.eventId, seat.id, userId],
      );
    await cell.db.query(
      `INSERT INTO tickets (id, order_id, event_id, ga_area_id, unit_no, user_id, token) VALUES ($1, $2, $3, $4, 1, $5, 't')`,
      [ticketIdFor(orderId, `${area}:1`), orderId, stalls.eventId, area, userId],
    );
    const read = ['2-2-9', '2-2-10', '2-10-1', '10-1-1'];
    const seatOf = new Map<string, string>(seats.map((s) => [s.id, s.label]));

    const view = await getOrder(cell.api.services.ctx, stalls.eventId, orderId, userId);
    expect(view.seats.map((s) => s.label)).toEqual(read);
    expect(view.tickets.map((t) => (t.seatId ? seatOf.get(t.seatId) : t.ga?.area))).toEqual([...read, 'Floor']);

    const printed = await loadOrderTickets(cell.api.services.ctx.db, orderId);
    expect(printed!.document.tickets.map((t) => (t.place.kind === 'seat' ? t.place.label : t.place.area))).toEqual([
      ...read,
      'Floor',
    ]);
  });
});
