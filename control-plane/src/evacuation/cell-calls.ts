import { BlockedSeatsAnswer, BlockedSeatsList, EvacuationFreeze, LedgerView } from '@onsale/contracts';
import type { z } from 'zod';
import { CellCallError, type CellTarget } from '../cells/client';

/** The cells' internal evacuation routes (cell/src/http/routes/internal.evacuation.ts), as the mover calls them. */

export interface EvacuationCellClient {
  freeze(cell: CellTarget, eventId: string): Promise<EvacuationFreeze>;
  /** Lifts the freeze to the sale's state the control plane records. */
  unfreeze(cell: CellTarget, eventId: string, status: 'on_sale' | 'paused'): Promise<EvacuationFreeze>;
  /** The cell answers /readyz (its database is reachable): false when it is down or unreachable. */
  ready(cell: CellTarget): Promise<boolean>;
  ledger(cell: CellTarget, eventId: string): Promise<LedgerView>;
  block(cell: CellTarget, eventId: string, sourceCell: string, seatIds: string[]): Promise<BlockedSeatsAnswer>;
  unblock(cell: CellTarget, eventId: string, sourceCell: string, seatIds: string[]): Promise<BlockedSeatsAnswer>;
  blocked(cell: CellTarget, eventId: string, sourceCell: string): Promise<string[]>;
}

export function createEvacuationCellClient(o: { token: string; timeoutMs: number }): EvacuationCellClient {
  async function call<T extends z.ZodTypeAny>(
    cell: CellTarget,
    method: string,
    path: string,
    schema: T,
    body?: unknown,
  ): Promise<z.infer<T>> {
    const url = `${cell.baseUrl.replace(/\/+$/, '')}${path}`;
    let res: Response;
    try {
      res = await fetch(url, {
        method,
        headers: {
          authorization: `Bearer ${o.token}`,
          accept: 'application/json',
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        },
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: AbortSignal.timeout(o.timeoutMs),
      });
    } catch (err) {
      throw new CellCallError(`cell ${cell.id} unreachable: ${(err as Error).message}`, null);
    }
    const text = await res.text();
    let parsed: unknown = text;
    try {
      parsed = JSON.parse(text);
    } catch {}
    if (!res.ok) {
      const e = (parsed as { error?: { code?: string; message?: string } })?.error;
      throw new CellCallError(
        `cell ${cell.id} answered ${res.status} to ${method} ${path}${e ? ` ${e.code}: ${e.message}` : ''}`,
        res.status,
        parsed,
      );
    }
    const ok = schema.safeParse(parsed);
    if (!ok.success) throw new CellCallError(`cell ${cell.id}: ${method} ${path} answer does not match`, 200, parsed);
    return ok.data;
  }
  const ev = (eventId: string) => `/internal/events/${encodeURIComponent(eventId)}`;
  return {
    freeze: (cell, eventId) => call(cell, 'PUT', `${ev(eventId)}/sales-freeze`, EvacuationFreeze),
    unfreeze: (cell, eventId, status) =>
      call(cell, 'DELETE', `${ev(eventId)}/sales-freeze?status=${status}`, EvacuationFreeze),
    ready: async (cell) => {
      try {
        const res = await fetch(`${cell.baseUrl.replace(/\/+$/, '')}/readyz`, {
          signal: AbortSignal.timeout(o.timeoutMs),
        });
        await res.body?.cancel();
        return res.ok;
      } catch {
        return false;
      }
    },
    ledger: (cell, eventId) => call(cell, 'GET', `${ev(eventId)}/ledger`, LedgerView),
    block: (cell, eventId, sourceCell, seatIds) =>
      call(cell, 'POST', `${ev(eventId)}/blocked-seats`, BlockedSeatsAnswer, { sourceCell, seatIds }),
    unblock: (cell, eventId, sourceCell, seatIds) =>
      call(cell, 'POST', `${ev(eventId)}/blocked-seats/release`, BlockedSeatsAnswer, { sourceCell, seatIds }),
    blocked: async (cell, eventId, sourceCell) =>
      (
        await call(
          cell,
          'GET',
          `${ev(eventId)}/blocked-seats?sourceCell=${encodeURIComponent(sourceCell)}`,
          BlockedSeatsList,
        )
      ).seatIds,
  };
}
