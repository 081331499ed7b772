import { createHash } from 'node:crypto';
import { sql } from 'drizzle-orm';
import type { CellContext } from '../context';
import { DomainError } from '../errors';

export interface Availability {
  eventId: string;
  asOf: string;
  availableCount: number;
  availableSeatIds: string[];
  /** General-admission areas with the places still free (held places are not free until they expire). */
  gaAreas: { areaId: string; name: string; capacity: number; remaining: number }[];
}

/**
 * A hint for drawing the seat map: seats with no unreleased hold and no valid ticket (a voided
 * ticket's seat was returned to sale), and each general-admission area's free places. It may be a
 * second stale (cached below) and the hold transaction never reads it: a green seat is an
 * invitation to try, not a promise.
 */
export async function readAvailability(ctx: CellContext, eventId: string): Promise<Availability> {
  const rows = await ctx.database.db.execute<{ id: string }>(sql`
    SELECT s.id FROM seats s
     WHERE s.event_id = ${eventId}
       AND NOT EXISTS (SELECT 1 FROM hold_seats hs WHERE hs.seat_id = s.id AND hs.released_at IS NULL)
       AND NOT EXISTS (SELECT 1 FROM tickets t WHERE t.seat_id = s.id AND t.voided_at IS NULL)
     ORDER BY s.id`);
  const gaAreas = await gaAvailability(ctx, eventId);
  if (rows.rows.length === 0 && gaAreas.length === 0) await mustKnowEvent(ctx, eventId);
  const ids = rows.rows.map((r) => r.id);
  return { eventId, asOf: new Date().toISOString(), availableCount: ids.length, availableSeatIds: ids, gaAreas };
}

async function gaAvailability(ctx: CellContext, eventId: string): Promise<Availability['gaAreas']> {
  const ga = await ctx.database.db.execute<{ id: string; name: string; capacity: number; remaining: number }>(sql`
    SELECT a.id, a.name, a.capacity, coalesce(sum(g.remaining), 0)::int AS remaining
      FROM ga_areas a LEFT JOIN ga_stripes g ON g.area_id = a.id
     WHERE a.event_id = ${eventId} GROUP BY a.id ORDER BY a.name`);
  return ga.rows.map((a) => ({ areaId: a.id, name: a.name, capacity: a.capacity, remaining: a.remaining }));
}

/** An event with neither seats nor areas: either it has none free, or this cell does not sell it. */
async function mustKnowEvent(ctx: CellContext, eventId: string): Promise<void> {
  const known = await ctx.database.db.execute(sql`SELECT 1 FROM events WHERE id = ${eventId}`);
  if (known.rows.length === 0) throw new DomainError('not_found', 'event not found in this cell');
}

/**
 * The same hint, compact enough to poll: per section, one bit per seat (1 = looks free) in the order of the seats'
 * ids (bytewise, as PostgreSQL sorts uuids), most significant bit first, base64. A client that has the seat map (the
 * catalog lists every seat with its id and section) sorts each section's seats by id and reads bit i as seat i: for
 * a 20,000-seat stadium that is about 3.4 KB against 780 KB of free seat ids.
 */
export interface SeatBitmaps {
  eventId: string;
  asOf: string;
  /** How `bitmap` is laid out; a new layout gets a new name rather than a silent change. */
  encoding: 'bitmap-by-seat-id';
  availableCount: number;
  sections: { section: string; seats: number; free: number; bitmap: string }[];
  gaAreas: Availability['gaAreas'];
}

export async function readSeatBitmaps(ctx: CellContext, eventId: string): Promise<SeatBitmaps> {
  const rows = await ctx.database.db.execute<{ section: string; free: boolean }>(sql`
    SELECT s.section,
           NOT EXISTS (SELECT 1 FROM hold_seats hs WHERE hs.seat_id = s.id AND hs.released_at IS NULL)
       AND NOT EXISTS (SELECT 1 FROM tickets t WHERE t.seat_id = s.id AND t.voided_at IS NULL) AS free
      FROM seats s
     WHERE s.event_id = ${eventId}
     ORDER BY s.section, s.id`);
  const ga = await gaAvailability(ctx, eventId);
  if (rows.rows.length === 0 && ga.length === 0) await mustKnowEvent(ctx, eventId);
  const sections: SeatBitmaps['sections'] = [];
  let availableCount = 0;
  for (let start = 0; start < rows.rows.length; ) {
    const section = rows.rows[start]!.section;
    let end = start;
    while (end < rows.rows.length && rows.rows[end]!.section === section) end++;
    const bits = Buffer.alloc(Math.ceil((end - start) / 8));
    let free = 0;
    for (let i = start; i < end; i++) {
      if (!rows.rows[i]!.free) continue;
      bits[(i - start) >> 3]! |= 0x80 >> ((i - start) & 7);
      free++;
    }
    sections.push({ section, seats: end - start, free, bitmap: bits.toString('base64') });
    availableCount += free;
    start = end;
  }
  return {
    eventId,
    asOf: new Date().toISOString(),
    encoding: 'bitmap-by-seat-id',
    availableCount,
    sections,
    gaAreas: ga,
  };
}

/** A document as it is served: its JSON once, and a validator that changes only when what it says does. */
export interface ServedDocument {
  body: string;
  etag: string;
}

export function servedDocument(doc: { asOf: string }): ServedDocument {
  const { asOf: _asOf, ...content } = doc;
  const digest = createHash('sha256').update(JSON.stringify(content)).digest('base64url').slice(0, 27);
  // Weak: two copies that differ only in their asOf say the same thing about the seats.
  return { body: JSON.stringify(doc), etag: `W/"${digest}"` };
}

/**
 * Keeps one read per event for `ttlMs`; concurrent callers share the read in flight, so however many buyers poll,
 * each API process asks the database once per event per period.
 */
export function perEventCache<T>(read: (eventId: string) => Promise<T>, ttlMs: number) {
  const cache = new Map<string, { at: number; value: Promise<T> }>();
  return (eventId: string): Promise<T> => {
    const hit = cache.get(eventId);
    if (hit && Date.now() - hit.at < ttlMs) return hit.value;
    const value = read(eventId);
    cache.set(eventId, { at: Date.now(), value });
    value.catch(() => cache.delete(eventId));
    return value;
  };
}
