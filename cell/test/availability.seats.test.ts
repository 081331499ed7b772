import { randomUUID } from 'node:crypto';
import { describe, expect } from 'vitest';
import { admittedBuyer } from '../../test/support/buyer';
import { cellTest } from '../../test/support/fixtures';

const it = cellTest({ seats: 30, event: { holdTtlSeconds: 120 } });

/** Reads a section's bitmap as the seat map does: its seats sorted by id, bit i (MSB first) for seat i. */
function freeSeats(section: { bitmap: string; seats: number }, sortedIds: string[]): string[] {
  const bits = Buffer.from(section.bitmap, 'base64');
  return sortedIds.filter((_, i) => (bits[i >> 3]! & (0x80 >> (i & 7))) !== 0);
}

describe('the compact availability document', () => {
  it('has one bit per seat in seat-id order, says what the list says, and answers 304 while unchanged', async ({
    identity,
    cell,
    event,
  }) => {
    const url = `${cell.url}/events/${event.eventId}/availability/seats`;
    const before = await fetch(url);
    expect(before.status).toBe(200);
    expect(before.headers.get('cache-control')).toContain('max-age=1');
    const etag = before.headers.get('etag')!;
    expect(etag).toMatch(/^W\/".+"$/);
    expect((await fetch(url, { headers: { 'if-none-match': etag } })).status).toBe(304);

    const buyer = await admittedBuyer(identity, cell, event.eventId);
    const taken = [event.seats[3]!.id, event.seats[17]!.id];
    expect((await buyer.hold(taken)).status).toBe(202);

    const after = await fetch(url, { headers: { 'if-none-match': etag } });
    expect(after.status).toBe(200);
    expect(after.headers.get('etag')).not.toBe(etag);
    const doc = (await after.json()) as {
      encoding: string;
      availableCount: number;
      sections: { section: string; seats: number; free: number; bitmap: string }[];
    };
    expect(doc.encoding).toBe('bitmap-by-seat-id');
    const list = (await (await fetch(`${cell.url}/events/${event.eventId}/availability`)).json()) as {
      availableSeatIds: string[];
    };
    const decoded = doc.sections.flatMap((s) => {
      const ids = event.seats
        .filter((seat) => seat.section === s.section)
        .map((seat) => seat.id)
        .sort();
      expect(s.seats).toBe(ids.length);
      const free = freeSeats(s, ids);
      expect(free).toHaveLength(s.free);
      return free;
    });
    expect(decoded.sort()).toEqual([...list.availableSeatIds].sort());
    expect(doc.availableCount).toBe(event.seats.length - 2);
    for (const id of taken) expect(decoded).not.toContain(id);
  });

  it('an event this cell does not sell is 404 in the platform error body', async ({ cell }) => {
    const res = await fetch(`${cell.url}/events/${randomUUID()}/availability/seats`);
    expect(res.status).toBe(404);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe('not_found');
  });
});
