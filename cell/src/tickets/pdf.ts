import {
  fill,
  PDFDocument,
  type PDFFont,
  type PDFOperator,
  popGraphicsState,
  pushGraphicsState,
  rectangle,
  StandardFonts,
  setFillingRgbColor,
} from 'pdf-lib';
import { qrModules } from './qr';

export type TicketPlace =
  | { kind: 'seat'; section: string; row: string; label: string }
  | { kind: 'area'; area: string; unit: number | string | null };

export interface TicketDocument {
  ticketId: string;
  token: string;
  place: TicketPlace;
}

export interface OrderTicketsDocument {
  orderId: string;
  event: { name: string; startsAt: Date };
  /** When the tickets were issued: the PDF's dates, so the same order renders to the same bytes. */
  issuedAt: Date;
  tickets: TicketDocument[];
}

const A6 = { width: 298, height: 420 };

/**
 * The standard fonts encode WinAnsi only, and a character outside it would throw mid-render. So every character
 * the font has is printed as written (curly quotes, dashes and the euro sign among them), a letter whose accent
 * WinAnsi lacks without that accent ("Dvořák" as "Dvorák"), and anything else as "?". The QR code, which is what
 * the door reads, carries the exact token regardless.
 */
function printer(font: PDFFont) {
  const known = new Set(font.getCharacterSet());
  const has = (ch: string) => known.has(ch.codePointAt(0)!);
  return (text: string) =>
    Array.from(text, (ch) => {
      if (has(ch)) return ch;
      const bare = ch.normalize('NFKD').replace(/\p{M}/gu, '');
      return bare && Array.from(bare).every(has) ? bare : '?';
    }).join('');
}

export const placeText = (p: TicketPlace) =>
  p.kind === 'seat'
    ? `Section ${p.section} · Row ${p.row} · Seat ${p.label}`
    : `${p.area}${p.unit === null ? '' : ` · No. ${p.unit}`}`;

/**
 * One page per ticket: the event, its date, the seat or GA area with its unit number, and the QR
 * code drawn as vector squares (sharp at any print size). Deterministic: no clock, no random id, so a
 * re-render after a crash or a redelivery is byte for byte the stored one.
 */
export async function renderTicketsPdf(doc: OrderTicketsDocument): Promise<Uint8Array> {
  const pdf = await PDFDocument.create({ updateMetadata: false });
  pdf.setTitle(`Tickets: ${doc.event.name}`);
  pdf.setSubject(`order ${doc.orderId}`);
  pdf.setProducer('onsale ticket worker');
  pdf.setCreationDate(doc.issuedAt);
  pdf.setModificationDate(doc.issuedAt);
  const regular = await pdf.embedFont(StandardFonts.Helvetica);
  const bold = await pdf.embedFont(StandardFonts.HelveticaBold);
  // Both fonts encode the same character set.
  const printable = printer(regular);
  const when = doc.event.startsAt.toISOString().replace('T', ' ').slice(0, 16);

  for (const [i, ticket] of doc.tickets.entries()) {
    const page = pdf.addPage([A6.width, A6.height]);
    let y = A6.height - 36;
    const line = (text: string, size: number, font = regular) => {
      page.drawText(printable(text), { x: 20, y, size, font, maxWidth: A6.width - 40 });
      y -= size + 8;
    };
    line(doc.event.name, 16, bold);
    line(`${when} UTC`, 10);
    line(placeText(ticket.place), 12, bold);
    line(`Ticket ${i + 1} of ${doc.tickets.length} · ${ticket.ticketId}`, 8);
    line(`Order ${doc.orderId}`, 8);

    const qr = qrModules(ticket.token);
    const side = A6.width - 60;
    const cell = side / (qr.size + 8);
    const left = 30 + 4 * cell;
    const top = y - 8 - 4 * cell;
    // One rectangle per horizontal run of dark modules, all filled as one path: with drawRectangle's fifteen
    // operators per rectangle a page cost about 41 ms of CPU, as one path 8.5 ms.
    const runs: PDFOperator[] = [];
    for (let my = 0; my < qr.size; my++) {
      let mx = 0;
      while (mx < qr.size) {
        if (!qr.dark(mx, my)) {
          mx++;
          continue;
        }
        const start = mx;
        while (mx < qr.size && qr.dark(mx, my)) mx++;
        runs.push(rectangle(left + start * cell, top - (my + 1) * cell, (mx - start) * cell, cell));
      }
    }
    page.pushOperators(pushGraphicsState(), setFillingRgbColor(0, 0, 0), ...runs, fill(), popGraphicsState());
  }
  return pdf.save({ useObjectStreams: false });
}
