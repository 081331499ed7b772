import type { DirectoryFeed } from '@onsale/contracts';
import { and, asc, desc, inArray, isNotNull, ne } from 'drizzle-orm';
import type { Services } from '../context';
import { cells, eventMoves, events, MOVING_STEPS } from '../db/schema';
import { directoryVersion } from '../db/sql';
import { withTransaction } from '../db/tx';

/** The read-only directory (event → cell, with epochs) the edge router polls; version changes with any change. */
export async function directoryFeed({ ctx }: { ctx: Services }): Promise<DirectoryFeed> {
  return withTransaction(
    ctx,
    async (tx) => {
      const version = await directoryVersion(tx);
      const cs = await tx.select().from(cells).orderBy(asc(cells.id));
      const evs = await tx
        .select({ eventId: events.id, cellId: events.cellId, epoch: events.directoryEpoch })
        .from(events)
        .where(and(isNotNull(events.cellId), ne(events.status, 'ended')))
        .orderBy(asc(events.id));
      // Events under evacuation between the fence and the flip: the router pauses their new holds.
      const moving = new Set(
        (
          await tx
            .select({ eventId: eventMoves.eventId })
            .from(eventMoves)
            .where(inArray(eventMoves.step, [...MOVING_STEPS]))
        ).map((m) => m.eventId),
      );
      // Where each moved event sold before (flipped moves, newest first): its older orders still live there.
      const formerCells = new Map<string, string[]>();
      const flipped = await tx
        .select({ eventId: eventMoves.eventId, fromCell: eventMoves.fromCell })
        .from(eventMoves)
        .where(and(isNotNull(eventMoves.flipEpoch), ne(eventMoves.step, 'aborted')))
        .orderBy(desc(eventMoves.flipEpoch));
      for (const m of flipped) {
        const trail = formerCells.get(m.eventId) ?? [];
        if (!trail.includes(m.fromCell)) trail.push(m.fromCell);
        formerCells.set(m.eventId, trail);
      }
      return {
        version,
        cells: cs.map((c) => ({ id: c.id, baseUrl: c.baseUrl, region: c.region, status: c.status })),
        events: evs.map((e) => ({
          eventId: e.eventId,
          cellId: e.cellId as string,
          epoch: e.epoch,
          ...(moving.has(e.eventId) ? { moving: true } : {}),
          ...(formerCells.has(e.eventId) ? { formerCells: formerCells.get(e.eventId) } : {}),
        })),
      };
    },
    { isolationLevel: 'repeatable read', accessMode: 'read only' },
  );
}
