import {
  BlockedSeatsAnswer,
  BlockedSeatsList,
  CellSignals,
  DomainError,
  EvacuationFreeze,
  type EventLoad,
  EventLoadAnswer,
  LedgerView,
  RefundOrderAnswer,
  type RefundOrderRequest,
  type RevocationNotice,
  RevocationNoticeAnswer,
  SalesStatusAnswer,
  type SalesStatusRequest,
} from '@onsale/contracts';
import type { z } from 'zod';

export interface CellTarget {
  id: string;
  baseUrl: string;
}

export class CellCallError extends Error {
  override name = 'CellCallError';
  constructor(
    message: string,
    /** The cell's HTTP status; null when it did not answer (refused, reset, timed out). */
    readonly status: number | null,
    readonly body?: unknown,
    readonly cellId?: string,
  ) {
    super(message);
  }
}

/**
 * A failed cell call as the control plane's callers see it: a cell that does not answer, fails or
 * answers off contract is unavailable for now (503 with Retry-After: the promoter tries again); a
 * cell that refuses (4xx) disagrees with the request (409, its reason kept).
 */
export function cellCallRefusal(err: CellCallError): DomainError {
  const details = { cellId: err.cellId, status: err.status };
  if (err.status === null || err.status >= 500 || err.status < 400)
    return new DomainError('cell_unavailable', err.message, { ...details, reason: 'cell_unreachable' });
  return new DomainError('conflict', err.message, { ...details, reason: 'cell_refused' });
}

/**
 * The control plane's one client of a cell's internal API (cell/src/http/routes/internal.*.ts): every
 * path is built by `eventPath`, which encodes the event id, and every answer is checked against its
 * contract before a caller sees it.
 */
export interface CellClient {
  loadEvent(cell: CellTarget, body: EventLoad): Promise<EventLoadAnswer>;
  signals(cell: CellTarget): Promise<CellSignals>;
  /** Pauses, resumes or cancels an event's sale in its cell (idempotent on the cell's side). */
  setSales(cell: CellTarget, eventId: string, body: SalesStatusRequest): Promise<SalesStatusAnswer>;
  /** Refunds one paid order for its promoter (idempotent on the cell's side). */
  refundOrder(cell: CellTarget, eventId: string, orderId: string, body: RefundOrderRequest): Promise<RefundOrderAnswer>;
  /** Evacuation: freezes an event's sales in a cell for a move. */
  freeze(cell: CellTarget, eventId: string): Promise<EvacuationFreeze>;
  /** Lifts the freeze to the sale's state the control plane records. */
  unfreeze(cell: CellTarget, eventId: string, status: 'on_sale' | 'paused'): Promise<EvacuationFreeze>;
  /** The cell answers /readyz (its database is reachable): false when it is down or unreachable. */
  ready(cell: CellTarget): Promise<boolean>;
  ledger(cell: CellTarget, eventId: string): Promise<LedgerView>;
  block(cell: CellTarget, eventId: string, sourceCell: string, seatIds: string[]): Promise<BlockedSeatsAnswer>;
  unblock(cell: CellTarget, eventId: string, sourceCell: string, seatIds: string[]): Promise<BlockedSeatsAnswer>;
  blocked(cell: CellTarget, eventId: string, sourceCell: string): Promise<string[]>;
  /** Has the cell enforce an admission revocation in its own Redis (idempotent on the cell's side). */
  revoke(cell: CellTarget, notice: RevocationNotice): Promise<RevocationNoticeAnswer>;
}

/** A revocation is one Redis write in the cell: a cell slower than this must not hold back the other cells' deliveries. */
const REVOKE_TIMEOUT_MS = 2_000;

/** An event's internal path on a cell; the id is a path segment, encoded whatever it holds. */
export const eventPath = (eventId: string, rest = '') => `/internal/events/${encodeURIComponent(eventId)}${rest}`;

export function createHttpCellClient(o: { token: string; timeoutMs: number; signalsTimeoutMs?: number }): CellClient {
  const url = (cell: CellTarget, path: string) => `${cell.baseUrl.replace(/\/+$/, '')}${path}`;
  async function call<T extends z.ZodTypeAny>(
    cell: CellTarget,
    method: string,
    path: string,
    contract: T,
    body?: unknown,
    timeoutMs = o.timeoutMs,
  ): Promise<z.infer<T>> {
    let res: Response;
    try {
      res = await fetch(url(cell, path), {
        method,
        headers: {
          authorization: `Bearer ${o.token}`,
          accept: 'application/json',
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        },
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: AbortSignal.timeout(timeoutMs),
      });
    } catch (err) {
      throw new CellCallError(`cell ${cell.id} unreachable: ${(err as Error).message}`, null, undefined, cell.id);
    }
    const text = await res.text();
    let answer: unknown = text;
    try {
      answer = JSON.parse(text);
    } catch {}
    if (!res.ok) {
      const e = (answer as { error?: { code?: string; message?: string } })?.error;
      throw new CellCallError(
        `cell ${cell.id} answered ${res.status} to ${method} ${path}${e ? ` ${e.code}: ${e.message}` : ''}`,
        res.status,
        answer,
        cell.id,
      );
    }
    const parsed = contract.safeParse(answer);
    if (!parsed.success)
      throw new CellCallError(`cell ${cell.id}: ${method} ${path} answer does not match`, res.status, answer, cell.id);
    return parsed.data;
  }
  return {
    loadEvent: (cell, body) => call(cell, 'PUT', eventPath(body.eventId), EventLoadAnswer, body),
    setSales: (cell, eventId, body) => call(cell, 'PUT', eventPath(eventId, '/sales'), SalesStatusAnswer, body),
    refundOrder: (cell, eventId, orderId, body) =>
      call(cell, 'POST', eventPath(eventId, `/orders/${encodeURIComponent(orderId)}/refund`), RefundOrderAnswer, body),
    signals: (cell) => call(cell, 'GET', '/internal/signals', CellSignals, undefined, o.signalsTimeoutMs ?? 2000),
    revoke: (cell, notice) =>
      call(
        cell,
        'POST',
        '/internal/revocations',
        RevocationNoticeAnswer,
        notice,
        Math.min(o.timeoutMs, REVOKE_TIMEOUT_MS),
      ),
    freeze: (cell, eventId) => call(cell, 'PUT', eventPath(eventId, '/sales-freeze'), EvacuationFreeze),
    unfreeze: (cell, eventId, status) =>
      call(cell, 'DELETE', eventPath(eventId, `/sales-freeze?status=${status}`), EvacuationFreeze),
    ready: async (cell) => {
      try {
        const res = await fetch(url(cell, '/readyz'), { signal: AbortSignal.timeout(o.timeoutMs) });
        await res.body?.cancel();
        return res.ok;
      } catch {
        return false;
      }
    },
    ledger: (cell, eventId) => call(cell, 'GET', eventPath(eventId, '/ledger'), LedgerView),
    block: (cell, eventId, sourceCell, seatIds) =>
      call(cell, 'POST', eventPath(eventId, '/blocked-seats'), BlockedSeatsAnswer, { sourceCell, seatIds }),
    unblock: (cell, eventId, sourceCell, seatIds) =>
      call(cell, 'POST', eventPath(eventId, '/blocked-seats/release'), BlockedSeatsAnswer, { sourceCell, seatIds }),
    blocked: async (cell, eventId, sourceCell) =>
      (
        await call(
          cell,
          'GET',
          eventPath(eventId, `/blocked-seats?sourceCell=${encodeURIComponent(sourceCell)}`),
          BlockedSeatsList,
        )
      ).seatIds,
  };
}
