import { decodePDFRawStream, PDFArray, PDFDocument, type PDFPage, PDFRawStream } from 'pdf-lib';
import { describe, expect, it } from 'vitest';
import { renderTicketsPdf } from '../src/tickets/pdf';
import { qrModules } from '../src/tickets/qr';

/*
 * The QR code on a ticket's PDF page is what the door reads off a printout: drawn as vector rectangles, it must
 * cover exactly the code's dark modules. Read back from the page's content stream, every rectangle mapped onto the
 * module grid, it must give the grid of the token's code, module for module.
 */

/** The page's drawing operators, decoded (pdf-lib writes its content streams Flate-encoded). */
function pageOperators(page: PDFPage): string {
  const contents = page.node.Contents();
  const streams = contents instanceof PDFArray ? contents.asArray().map((r) => page.doc.context.lookup(r)) : [contents];
  return streams
    .filter((s): s is PDFRawStream => s instanceof PDFRawStream)
    .map((s) => Buffer.from(decodePDFRawStream(s).decode()).toString('latin1'))
    .join('\n');
}

/** The dark modules the page's rectangles cover, as "x,y" of the grid whose module side is the smallest height. */
function drawnModules(ops: string): Set<string> {
  const rects = [...ops.matchAll(/(-?[\d.]+) (-?[\d.]+) (-?[\d.]+) (-?[\d.]+) re/g)].map((m) =>
    m.slice(1, 5).map(Number),
  ) as [number, number, number, number][];
  const side = Math.min(...rects.map((r) => r[3]));
  const left = Math.min(...rects.map((r) => r[0]));
  const top = Math.max(...rects.map((r) => r[1] + r[3]));
  const dark = new Set<string>();
  for (const [x, y, w, h] of rects) {
    expect(h).toBeCloseTo(side, 3);
    const row = Math.round((top - (y + h)) / side);
    const from = Math.round((x - left) / side);
    for (let i = 0; i < Math.round(w / side); i++) dark.add(`${from + i},${row}`);
  }
  return dark;
}

describe('the ticket PDF', () => {
  it("draws each ticket's QR code module for module, on a page of its own", async () => {
    const tokens = ['eyJhbGciOiJFZERTQSJ9.first-ticket.signature', `eyJ${'x'.repeat(480)}.second.signature`];
    const bytes = await renderTicketsPdf({
      orderId: 'order-1',
      event: { name: 'Stadium Night', startsAt: new Date('2027-06-01T19:30:00Z') },
      issuedAt: new Date('2027-01-01T10:00:00Z'),
      tickets: tokens.map((token, i) => ({
        ticketId: `ticket-${i}`,
        token,
        place: { kind: 'seat', section: 'A', row: '1', label: String(i + 1) },
      })),
    });
    const pdf = await PDFDocument.load(bytes);
    expect(pdf.getPageCount()).toBe(2);
    for (const [i, token] of tokens.entries()) {
      const qr = qrModules(token);
      const want = new Set<string>();
      for (let y = 0; y < qr.size; y++) for (let x = 0; x < qr.size; x++) if (qr.dark(x, y)) want.add(`${x},${y}`);
      // The drawn grid starts at the code's first dark module: its finder pattern's corner, (0, 0).
      expect(drawnModules(pageOperators(pdf.getPage(i)))).toEqual(want);
    }
  });

  it('renders the same order to the same bytes', async () => {
    const doc = {
      orderId: 'order-2',
      event: { name: 'Stadium Night', startsAt: new Date('2027-06-01T19:30:00Z') },
      issuedAt: new Date('2027-01-01T10:00:00Z'),
      tickets: [{ ticketId: 't', token: 'token', place: { kind: 'area', area: 'Floor', unit: 7 } as const }],
    };
    expect(Buffer.from(await renderTicketsPdf(doc)).equals(Buffer.from(await renderTicketsPdf(doc)))).toBe(true);
  });

  it("prints names as written where the font can (curly quotes, dashes, €), an accent it lacks as the bare letter, the rest as '?'", async () => {
    const bytes = await renderTicketsPdf({
      orderId: 'order-3',
      event: { name: 'Guns N’ Roses – “Live” € 20', startsAt: new Date('2027-06-01T19:30:00Z') },
      issuedAt: new Date('2027-01-01T10:00:00Z'),
      tickets: [
        { ticketId: 't1', token: 'token-1', place: { kind: 'seat', section: 'Dvořák', row: 'Ł1', label: 'Zénith…' } },
        { ticketId: 't2', token: 'token-2', place: { kind: 'area', area: '東京 Floor', unit: 3 } },
      ],
    });
    const pdf = await PDFDocument.load(bytes);
    // pdf-lib writes standard-font text as the hex of its WinAnsi (windows-1252) bytes.
    const text = (i: number) =>
      [...pageOperators(pdf.getPage(i)).matchAll(/<([0-9A-Fa-f]*)>\s*Tj/g)].map((m) =>
        new TextDecoder('windows-1252').decode(Buffer.from(m[1]!, 'hex')),
      );
    expect(text(0)).toContain('Guns N’ Roses – “Live” € 20');
    expect(text(0)).toContain('Section Dvorák · Row ?1 · Seat Zénith…');
    expect(text(1)).toContain('?? Floor · No. 3');
    // The document's title is not drawn: it keeps every character.
    expect(pdf.getTitle()).toBe('Tickets: Guns N’ Roses – “Live” € 20');
  });
});
