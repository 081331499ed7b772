import type { CellSignals } from '@onsale/contracts';
import { metrics } from '@onsale/contracts';
import { and, eq, inArray } from 'drizzle-orm';
import type { Services } from '../context';
import { cells, controllerDecisions, events, onsales, releaseRates } from '../db/schema';
import { dbOf, withTransaction } from '../db/tx';
import { appendFact } from '../outbox/facts';
import { setRoomControl } from '../waiting-room/room';
import { decide, thresholdsFrom } from './decide';

/** Where the controller reads a cell's signals; the default is the cell's GET /internal/signals. */
export type SignalSource = (cell: { id: string; baseUrl: string }) => Promise<CellSignals>;

/**
 * One controller pass: for each cell with live onsales, read its signals once; for each event,
 * decide R, record the decision, publish R and the sold-out flag to the waiting room.
 */
export async function runControllerTick(ctx: Services, opts: { source?: SignalSource } = {}) {
  const source: SignalSource = opts.source ?? ((cell) => ctx.cells.signals(cell));
  const now = ctx.clock.now();
  const rows = await dbOf(ctx)
    .select({ ev: events, on: onsales, rr: releaseRates, cell: cells })
    .from(events)
    .innerJoin(onsales, eq(onsales.eventId, events.id))
    .innerJoin(releaseRates, eq(releaseRates.eventId, events.id))
    .innerJoin(cells, eq(cells.id, events.cellId))
    .where(inArray(events.status, ['on_sale', 'paused', 'sold_out']));
  const byCell = new Map<string, typeof rows>();
  for (const r of rows) byCell.set(r.cell.id, [...(byCell.get(r.cell.id) ?? []), r]);
  const thresholds = thresholdsFrom(ctx.config);
  const out: { eventId: string; oldRate: number; newRate: number; reason: string }[] = [];

  await Promise.all(
    [...byCell.values()].map(async (group) => {
      const cell = group[0]!.cell;
      let signals: CellSignals | null = null;
      try {
        signals = await source(cell);
      } catch (err) {
        ctx.log.warn('cell signals unavailable', { cellId: cell.id, err });
      }
      for (const { ev, on, rr } of group) {
        const d = decide({
          current: rr.rate,
          mode: rr.mode,
          pinnedRate: rr.pinnedRate,
          floor: on.minReleaseRate,
          ceiling: on.maxReleaseRate,
          signals,
          thresholds,
          increaseFraction: ctx.config.CONTROLLER_INCREASE_FRACTION,
          decreaseFactor: ctx.config.CONTROLLER_DECREASE_FACTOR,
        });
        metrics.releaseRate.set({ event: ev.id }, d.rate);
        metrics.releaseRateFloor.set({ event: ev.id }, on.minReleaseRate);
        metrics.controllerDecisions.inc({
          event: ev.id,
          decision: d.rate > rr.rate ? 'raise' : d.rate < rr.rate ? 'lower' : signals ? 'hold' : 'hold_blind',
        });
        const available = signals ? (signals.availableSeats[ev.id] ?? null) : null;
        const soldOut = available === null ? undefined : available === 0;
        await withTransaction(ctx, async (tx) => {
          await tx.update(releaseRates).set({ rate: d.rate, updatedAt: now }).where(eq(releaseRates.eventId, ev.id));
          await tx.insert(controllerDecisions).values({
            eventId: ev.id,
            cellId: cell.id,
            at: now,
            mode: rr.mode,
            signals: signals ?? { unavailable: true },
            oldRate: rr.rate,
            newRate: d.rate,
            reason: soldOut ? `${d.reason}; sold out for now (0 seats available)` : d.reason,
          });
          if (d.rate !== rr.rate)
            await appendFact(
              tx,
              'ReleaseDecided',
              ev.id,
              { eventId: ev.id, cellId: cell.id, oldRate: rr.rate, newRate: d.rate, reason: d.reason },
              now,
            );
          if (soldOut === true && ev.status === 'on_sale') {
            await tx
              .update(events)
              .set({ status: 'sold_out', updatedAt: now })
              .where(and(eq(events.id, ev.id), eq(events.status, 'on_sale')));
          } else if (soldOut === false && ev.status === 'sold_out') {
            await tx
              .update(events)
              .set({ status: 'on_sale', updatedAt: now })
              .where(and(eq(events.id, ev.id), eq(events.status, 'sold_out')));
          }
        });
        await setRoomControl(ctx, ev.id, { rate: d.rate, paused: rr.mode === 'paused', soldOut, available });
        out.push({ eventId: ev.id, oldRate: rr.rate, newRate: d.rate, reason: d.reason });
      }
    }),
  );
  return out;
}
