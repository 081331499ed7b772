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
  const ga = await ctx.database.db.execute<{ id: string; name: string; capacity: number; remaining: number }>(sql`
    SELECT a.id, a.name, a.capacity, coalesce(sum(g.remaining), 0)::int AS remaining
      FROM ga_areas a LEFT JOIN ga_stripes g ON g.area_id = a.id
     WHERE a.event_id = ${eventId} GROUP BY a.id ORDER BY a.name`);
  if (rows.rows.length === 0 && ga.rows.length === 0) {
    const known = await ctx.database.db.execute(sql`SELECT 1 FROM events WHERE id = ${eventId}`);
    if (known.rows.length === 0) throw new DomainError('not_found', 'event not found in this cell');
  }
  const ids = rows.rows.map((r) => r.id);
  const gaAreas = ga.rows.map((a) => ({ areaId: a.id, name: a.name, capacity: a.capacity, remaining: a.remaining }));
  return { eventId, asOf: new Date().toISOString(), availableCount: ids.length, availableSeatIds: ids, gaAreas };
}

/** Caches one read per event for `ttlMs`; concurrent callers share the read in flight. */
export function cachedAvailability(ctx: CellContext, ttlMs: number) {
  const cache = new Map<string, { at: number; value: Promise<Availability> }>();
  return (eventId: string): Promise<Availability> => {
    const hit = cache.get(eventId);
    if (hit && Date.now() - hit.at < ttlMs) return hit.value;
    const value = readAvailability(ctx, eventId);
    cache.set(eventId, { at: Date.now(), value });
    value.catch(() => cache.delete(eventId));
    return value;
  };
}
