/**
 * Where each seat is drawn, for uploads that give no coordinates (none do today): a deterministic layout a
 * client can draw as is, the same for the same seat map on every server.
 *
 * - Sections are blocks side by side, left to right, in natural order of their names ("2" before "10"),
 *   with SECTION_GAP empty columns between two blocks.
 * - Inside a block, rows go top to bottom in natural order of their names (y = 0 is the first row).
 * - Inside a row, seats go left to right in natural order of their labels (x counts seats, not seat numbers:
 *   a row with seats 1, 2 and 5 draws them in three adjacent places).
 *
 * Units are seat places: one seat is 1 × 1. A block is as wide as its longest row.
 */
import { naturalCompare } from '@onsale/contracts';

export const SEAT_LAYOUT = 'blocks-by-section';
export const SECTION_GAP = 2;

export interface LaidOutSeat<S> {
  seat: S;
  x: number;
  y: number;
}
export interface LaidOutSection<S> {
  section: string;
  /** The block's left edge and size, in seat places. */
  x: number;
  width: number;
  height: number;
  rows: { row: string; y: number; seats: LaidOutSeat<S>[] }[];
}

export function layOutSeats<S extends { section: string; row: string; label: string }>(
  seats: readonly S[],
): LaidOutSection<S>[] {
  const bySection = new Map<string, Map<string, S[]>>();
  for (const s of seats) {
    const rows = bySection.get(s.section) ?? new Map<string, S[]>();
    bySection.set(s.section, rows);
    const row = rows.get(s.row);
    if (row) row.push(s);
    else rows.set(s.row, [s]);
  }
  let left = 0;
  return [...bySection.keys()].sort(naturalCompare).map((section) => {
    const rows = bySection.get(section)!;
    const laid = [...rows.keys()].sort(naturalCompare).map((row, y) => ({
      row,
      y,
      seats: rows
        .get(row)!
        .sort((a, b) => naturalCompare(a.label, b.label))
        .map((seat, i) => ({ seat, x: left + i, y })),
    }));
    const width = Math.max(...laid.map((r) => r.seats.length));
    const block = { section, x: left, width, height: laid.length, rows: laid };
    left += width + SECTION_GAP;
    return block;
  });
}
