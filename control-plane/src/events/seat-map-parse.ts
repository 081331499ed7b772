import { CURRENCY_MESSAGE, isCurrency, SEATS_PER_LOAD_MAX, tierPriceIssues } from '@onsale/contracts';

export interface TierDecl {
  code: string;
  name: string;
  price: number;
  currency: string;
  /** Service fee per ticket in minor units; `included` in the price or `added` on top. */
  fee: number;
  fees: 'included' | 'added';
}
/** A general-admission area: a capacity and a tier, no seats. */
export interface GaAreaDecl {
  name: string;
  capacity: number;
  tier: string;
}
export interface SeatDecl {
  label: string;
  section: string;
  row: string;
  tier: string;
}
export interface SeatMapIssue {
  /** 1-based data row (the seat's position in the upload; CSV header excluded). */
  row: number | null;
  /** CSV: the physical line in the file. */
  line?: number;
  field: string;
  message: string;
  /** FieldIssue-compatible path (e.g. "seats[4].tier", "line 6: price"). */
  path: string;
}
export interface ParsedSeatMap {
  tiers: TierDecl[];
  seats: SeatDecl[];
  gaAreas: GaAreaDecl[];
}

const MAX_ISSUES = 100;
export const GA_CAPACITY_MAX = 1_000_000;

class Issues {
  list: SeatMapIssue[] = [];
  total = 0;
  add(i: SeatMapIssue) {
    this.total++;
    if (this.list.length < MAX_ISSUES) this.list.push(i);
  }
}

const str = (v: unknown) => (typeof v === 'string' ? v.trim() : typeof v === 'number' ? String(v) : '');

function checkText(
  issues: Issues,
  where: (field: string) => Omit<SeatMapIssue, 'message'>,
  field: string,
  value: string,
  max: number,
) {
  if (!value) issues.add({ ...where(field), message: `${field} is required` });
  else if (value.length > max) issues.add({ ...where(field), message: `${field} is longer than ${max} characters` });
}

function parsePrice(raw: unknown): number | string {
  const s = str(raw);
  if (!/^\d+$/.test(s)) return 'price must be a positive whole number of minor units (e.g. 7500 for 75.00)';
  const n = Number(s);
  if (n <= 0) return 'price must be greater than zero';
  return n;
}

function parseFee(raw: unknown): number | string {
  if (typeof raw !== 'number' || !Number.isInteger(raw) || raw < 0)
    return 'fee must be a whole number of minor units, 0 or more';
  return raw;
}

function parseCurrency(raw: unknown): string | null {
  const s = str(raw).toLowerCase();
  return isCurrency(s) ? s : null;
}

/**
 * Validates a whole seat map, all or nothing: every problem is reported with its row and field
 * (duplicate labels, bad prices, unknown tiers, missing fields), up to 100 of them.
 * Tiers may be declared in the upload or already exist on the event (`knownTiers`).
 */
function finish(
  issues: Issues,
  tiers: Map<string, TierDecl>,
  seats: (SeatDecl & { at: (f: string) => Omit<SeatMapIssue, 'message'> })[],
  gaAreas: (GaAreaDecl & { at: (f: string) => Omit<SeatMapIssue, 'message'> })[] = [],
) {
  if (seats.length === 0 && gaAreas.length === 0)
    issues.add({ row: null, field: 'seats', path: 'seats', message: 'the seat map has no seats and no GA areas' });
  const gaNames = new Map<string, number>();
  gaAreas.forEach((a, i) => {
    if (a.tier && !tiers.has(a.tier)) issues.add({ ...a.at('tier'), message: `unknown tier '${a.tier}'` });
    const prev = gaNames.get(a.name);
    if (a.name && prev !== undefined)
      issues.add({ ...a.at('name'), message: `duplicate GA area '${a.name}' (first at gaAreas[${prev}])` });
    else if (a.name) gaNames.set(a.name, i);
  });
  if (seats.length > SEATS_PER_LOAD_MAX) {
    issues.add({
      row: null,
      field: 'seats',
      path: 'seats',
      message: `at most ${SEATS_PER_LOAD_MAX} seats (got ${seats.length})`,
    });
  }
  const currencies = new Set([...tiers.values()].map((t) => t.currency));
  if (currencies.size > 1)
    issues.add({
      row: null,
      field: 'currency',
      path: 'tiers',
      message: `one currency per event (got ${[...currencies].join(', ')})`,
    });
  const firstRow = new Map<string, number>();
  for (const s of seats) {
    if (s.tier && !tiers.has(s.tier)) issues.add({ ...s.at('tier'), message: `unknown tier '${s.tier}'` });
    if (!s.label) continue;
    const prev = firstRow.get(s.label);
    const here = s.at('label').row ?? 0;
    if (prev !== undefined)
      issues.add({ ...s.at('label'), message: `duplicate label '${s.label}' (first on row ${prev})` });
    else firstRow.set(s.label, here);
  }
  if (issues.total > 0) return { ok: false as const, issues: issues.list, total: issues.total };
  return {
    ok: true as const,
    map: {
      tiers: [...tiers.values()],
      seats: seats.map(({ at: _a, ...s }) => s),
      gaAreas: gaAreas.map(({ at: _a, ...a }) => a),
    },
  };
}

export type SeatMapParse = ReturnType<typeof finish>;

export function parseSeatMapJson(body: unknown, knownTiers: TierDecl[]): SeatMapParse {
  const issues = new Issues();
  const tiers = new Map(knownTiers.map((t) => [t.code, t]));
  const b = (body ?? {}) as { tiers?: unknown; seats?: unknown; gaAreas?: unknown };
  if (
    typeof body !== 'object' ||
    body === null ||
    !(Array.isArray(b.seats) || (b.seats === undefined && Array.isArray(b.gaAreas)))
  ) {
    issues.add({
      row: null,
      field: 'seats',
      path: 'seats',
      message: 'body must be an object with a seats array and/or a gaAreas array (and optionally tiers)',
    });
    return { ok: false, issues: issues.list, total: issues.total };
  }
  if (b.tiers !== undefined && !Array.isArray(b.tiers))
    issues.add({ row: null, field: 'tiers', path: 'tiers', message: 'tiers must be an array' });
  if (Array.isArray(b.tiers)) {
    tiers.clear();
    b.tiers.forEach((t: Record<string, unknown>, i) => {
      const at = (f: string) => ({ row: null, field: f, path: `tiers[${i}].${f}` });
      const code = str(t?.code);
      checkText(issues, at, 'code', code, 32);
      const price = parsePrice(t?.price);
      if (typeof price === 'string') issues.add({ ...at('price'), message: price });
      const currency = parseCurrency(t?.currency);
      if (!currency) issues.add({ ...at('currency'), message: CURRENCY_MESSAGE });
      if (code && tiers.has(code)) issues.add({ ...at('code'), message: `duplicate tier '${code}'` });
      const fee = t?.fee === undefined ? 0 : parseFee(t.fee);
      if (typeof fee === 'string') issues.add({ ...at('fee'), message: fee });
      const fees = t?.fees === undefined ? 'included' : t.fees;
      if (fees !== 'included' && fees !== 'added')
        issues.add({ ...at('fees'), message: "fees must be 'included' or 'added'" });
      if (typeof price === 'number' && typeof fee === 'number' && (fees === 'included' || fees === 'added')) {
        const priced = tierPriceIssues({ price, fee, fees });
        for (const i of priced) issues.add({ ...at(i.field), message: i.message });
        if (code && currency && !priced.length)
          tiers.set(code, { code, name: str(t?.name) || code, price, currency, fee, fees });
      }
    });
  }
  if (b.gaAreas !== undefined && !Array.isArray(b.gaAreas))
    issues.add({ row: null, field: 'gaAreas', path: 'gaAreas', message: 'gaAreas must be an array' });
  const gaAreas = (Array.isArray(b.gaAreas) ? (b.gaAreas as Record<string, unknown>[]) : []).map((a, i) => {
    const at = (f: string) => ({ row: i + 1, field: f, path: `gaAreas[${i}].${f}` });
    const name = str(a?.name);
    const tier = str(a?.tier);
    checkText(issues, at, 'name', name, 64);
    checkText(issues, at, 'tier', tier, 32);
    const capacity = a?.capacity;
    const ok =
      typeof capacity === 'number' && Number.isInteger(capacity) && capacity > 0 && capacity <= GA_CAPACITY_MAX;
    if (!ok) issues.add({ ...at('capacity'), message: `capacity must be a whole number from 1 to ${GA_CAPACITY_MAX}` });
    return { name, tier, capacity: ok ? capacity : 0, at };
  });
  const seats = ((b.seats ?? []) as Record<string, unknown>[]).map((s, i) => {
    const at = (f: string) => ({ row: i + 1, field: f, path: `seats[${i}].${f}` });
    const section = str(s?.section);
    const row = str(s?.row);
    const seat = str(s?.seat);
    const label = str(s?.label) || (section && row && seat ? `${section}-${row}-${seat}` : '');
    const tier = str(s?.tier);
    checkText(issues, at, 'section', section, 64);
    checkText(issues, at, 'row', row, 16);
    if (!label) issues.add({ ...at('label'), message: 'label (or seat) is required' });
    else if (label.length > 64) issues.add({ ...at('label'), message: 'label is longer than 64 characters' });
    checkText(issues, at, 'tier', tier, 32);
    if (s?.price !== undefined) issues.add({ ...at('price'), message: 'prices belong to tiers, not seats' });
    return { label, section, row, tier, at };
  });
  return finish(issues, tiers, seats, gaAreas);
}

/**
 * Minimal RFC 4180 CSV: quoted fields, doubled quotes, CRLF or LF. A quote never closed takes the rest of the text
 * into its field, and its record says so (`unclosedQuote`), for the reader to name the line rather than the fields the
 * rest of the file went missing from.
 */
export function* csvRecords(text: string): Generator<{ line: number; fields: string[]; unclosedQuote?: true }> {
  let i = 0;
  let line = 1;
  const n = text.length;
  while (i < n) {
    const startLine = line;
    const fields: string[] = [];
    let field = '';
    let unclosedQuote = false;
    for (;;) {
      if (text[i] === '"') {
        i++;
        for (;;) {
          const q = text.indexOf('"', i);
          if (q < 0) {
            field += text.slice(i);
            i = n;
            unclosedQuote = true;
            break;
          }
          field += text.slice(i, q);
          for (let k = i; k < q; k++) if (text.charCodeAt(k) === 10) line++;
          i = q + 1;
          if (text[i] === '"') {
            field += '"';
            i++;
          } else break;
        }
      }
      let j = i;
      while (j < n && text[j] !== ',' && text[j] !== '\n' && text[j] !== '\r') j++;
      field += text.slice(i, j);
      i = j;
      fields.push(field);
      field = '';
      if (text[i] === ',') {
        i++;
        continue;
      }
      if (text[i] === '\r') i++;
      if (text[i] === '\n') i++;
      line++;
      break;
    }
    if (fields.length === 1 && fields[0] === '') continue;
    yield unclosedQuote ? { line: startLine, fields, unclosedQuote } : { line: startLine, fields };
  }
}

/**
 * CSV columns (header row required, any order): section, row, seat or label, tier, and optionally
 * price + currency (a tier's price may be given on its rows; all rows of a tier must agree).
 * A row with a `capacity` is a general-admission area named by its section (row and seat empty).
 */
export function parseSeatMapCsv(text: string, knownTiers: TierDecl[]): SeatMapParse {
  const issues = new Issues();
  const tiers = new Map(knownTiers.map((t) => [t.code, t]));
  const tierRow = new Map<string, number>();
  const records = csvRecords(text.replace(/^\uFEFF/, ''));
  const header = records.next();
  if (header.done) {
    issues.add({ row: null, field: 'header', path: 'header', message: 'the CSV is empty' });
    return { ok: false, issues: issues.list, total: issues.total };
  }
  const unclosed = (line: number, row: number | null) => ({
    row,
    line,
    field: 'csv',
    path: `line ${line}`,
    message: 'a quoted field opened on this line is never closed (a missing "): the rest of the file was read into it',
  });
  if (header.value.unclosedQuote) {
    issues.add(unclosed(header.value.line, null));
    return { ok: false, issues: issues.list, total: issues.total };
  }
  const cols = header.value.fields.map((h) => h.trim().toLowerCase());
  const col = (name: string) => cols.indexOf(name);
  const missing = ['section', 'tier'].filter((c) => col(c) < 0);
  // A file of GA areas only needs no seat columns.
  if (col('capacity') < 0) {
    if (col('row') < 0) missing.push('row');
    if (col('seat') < 0 && col('label') < 0) missing.push('seat or label');
  }
  if (missing.length) {
    issues.add({
      row: null,
      line: 1,
      field: 'header',
      path: 'line 1',
      message: `missing column(s): ${missing.join(', ')}`,
    });
    return { ok: false, issues: issues.list, total: issues.total };
  }
  const [cSection, cRow, cSeat, cLabel, cTier, cPrice, cCurrency, cCapacity] = [
    'section',
    'row',
    'seat',
    'label',
    'tier',
    'price',
    'currency',
    'capacity',
  ].map(col) as number[];
  const seats: (SeatDecl & { at: (f: string) => Omit<SeatMapIssue, 'message'> })[] = [];
  const gaAreas: (GaAreaDecl & { at: (f: string) => Omit<SeatMapIssue, 'message'> })[] = [];
  let dataRow = 0;
  for (const { line, fields, unclosedQuote } of records) {
    dataRow++;
    const r = dataRow;
    if (unclosedQuote) {
      issues.add(unclosed(line, r));
      break;
    }
    const at = (f: string) => ({ row: r, line, field: f, path: `line ${line}: ${f}` });
    const get = (c: number | undefined) => (c !== undefined && c >= 0 ? (fields[c] ?? '').trim() : '');
    const section = get(cSection);
    const row = get(cRow);
    const seat = get(cSeat);
    const label = get(cLabel) || (section && row && seat ? `${section}-${row}-${seat}` : '');
    const tier = get(cTier);
    const capacity = get(cCapacity);
    checkText(issues, at, 'section', section, 64);
    if (capacity) {
      const n = /^\d+$/.test(capacity) ? Number(capacity) : 0;
      if (n < 1 || n > GA_CAPACITY_MAX)
        issues.add({ ...at('capacity'), message: `capacity must be a whole number from 1 to ${GA_CAPACITY_MAX}` });
      if (row || seat || get(cLabel))
        issues.add({ ...at('capacity'), message: 'a GA area (a row with a capacity) has no row, seat or label' });
      checkText(issues, at, 'tier', tier, 32);
      gaAreas.push({ name: section, capacity: n, tier, at });
    } else {
      checkText(issues, at, 'row', row, 16);
      if (!label) issues.add({ ...at('label'), message: 'label (or seat) is required' });
      else if (label.length > 64) issues.add({ ...at('label'), message: 'label is longer than 64 characters' });
      checkText(issues, at, 'tier', tier, 32);
      seats.push({ label, section, row, tier, at });
    }
    const rawPrice = get(cPrice);
    const rawCurrency = get(cCurrency);
    if (tier && (rawPrice || rawCurrency)) {
      const price = parsePrice(rawPrice);
      const currency = parseCurrency(rawCurrency);
      if (typeof price === 'string') issues.add({ ...at('price'), message: price });
      if (!currency) issues.add({ ...at('currency'), message: CURRENCY_MESSAGE });
      const prev = tiers.get(tier);
      // A row sets its tier's price; the fee stays the one the event's tier already has.
      const priced =
        typeof price === 'number'
          ? tierPriceIssues({ price, fee: prev?.fee ?? 0, fees: prev?.fees ?? 'included' })
          : [];
      for (const i of priced) issues.add({ ...at('price'), message: i.message });
      if (typeof price === 'number' && currency && !priced.length) {
        const first = tierRow.get(tier);
        if (prev && first !== undefined && (prev.price !== price || prev.currency !== currency)) {
          issues.add({
            ...at('price'),
            message: `tier '${tier}' is ${prev.price} ${prev.currency} on row ${first}, ${price} ${currency} here`,
          });
        } else if (first === undefined) {
          tiers.set(tier, {
            code: tier,
            name: prev?.name ?? tier,
            price,
            currency,
            fee: prev?.fee ?? 0,
            fees: prev?.fees ?? 'included',
          });
          tierRow.set(tier, r);
        }
      }
    }
    if (dataRow > SEATS_PER_LOAD_MAX + 1) break;
  }
  return finish(issues, tiers, seats, gaAreas);
}
