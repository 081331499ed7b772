/**
 * Compares names as people read them: runs of digits by their value, everything else by UTF-16 code units,
 * never by locale (an order must not change with the server's language). Equal readings fall back to the raw
 * strings, so the order is total.
 */
export function naturalCompare(a: string, b: string): number {
  const ta = a.match(/\d+|\D+/g) ?? [];
  const tb = b.match(/\d+|\D+/g) ?? [];
  for (let i = 0; i < Math.min(ta.length, tb.length); i++) {
    const x = ta[i]!;
    const y = tb[i]!;
    const digits = /^\d/.test(x) && /^\d/.test(y);
    const c = digits ? compareDigits(x, y) : compareUnits(x, y);
    if (c !== 0) return c;
  }
  return ta.length - tb.length || compareUnits(a, b);
}

const compareUnits = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/** Digit runs of any length, by value: without leading zeros the longer is larger, else compare the digits. */
function compareDigits(a: string, b: string): number {
  const x = a.replace(/^0+(?=\d)/, '');
  const y = b.replace(/^0+(?=\d)/, '');
  return x.length - y.length || compareUnits(x, y);
}

/** Seats as a buyer reads them on a map, an order or a ticket: by section, then row, then label ("2" before "10"). */
export const bySeatPlace = (
  a: { section: string; row: string; label: string },
  b: { section: string; row: string; label: string },
) => naturalCompare(a.section, b.section) || naturalCompare(a.row, b.row) || naturalCompare(a.label, b.label);
