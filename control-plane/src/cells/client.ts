import {
  CellSignals,
  type EventLoad,
  EventLoadAnswer,
  RefundOrderAnswer,
  type RefundOrderRequest,
  type RevocationNotice,
  RevocationNoticeAnswer,
  SalesStatusAnswer,
  type SalesStatusRequest,
} from '@onsale/contracts';

export interface CellTarget {
  id: string;
  baseUrl: string;
}

export class CellCallError extends Error {
  override name = 'CellCallError';
  constructor(
    message: string,
    readonly status: number | null,
    readonly body?: unknown,
  ) {
    super(message);
  }
}

/** The control plane's view of a cell's internal API (load an event; read health signals). */
export interface CellClient {
  loadEvent(cell: CellTarget, body: EventLoad): Promise<EventLoadAnswer>;
  signals(cell: CellTarget): Promise<CellSignals>;
  /** Pauses, resumes or cancels an event's sale in its cell (idempotent on the cell's side). */
  setSales(cell: CellTarget, eventId: string, body: SalesStatusRequest): Promise<SalesStatusAnswer>;
  /** Refunds one paid order for its promoter (idempotent on the cell's side). */
  refundOrder(cell: CellTarget, eventId: string, orderId: string, body: RefundOrderRequest): Promise<RefundOrderAnswer>;
  /** Has the cell enforce an admission revocation in its own Redis (idempotent on the cell's side). */
  revoke(cell: CellTarget, notice: RevocationNotice): Promise<RevocationNoticeAnswer>;
}

/** A revocation is one Redis write in the cell: a cell slower than this must not hold back the other cells' deliveries. */
const REVOKE_TIMEOUT_MS = 2_000;

export function createHttpCellClient(o: { token: string; timeoutMs: number; signalsTimeoutMs?: number }): CellClient {
  const call = async (url: string, init: RequestInit, timeoutMs: number) => {
    let res: Response;
    try {
      res = await fetch(url, {
        ...init,
        headers: { ...(init.headers ?? {}), authorization: `Bearer ${o.token}`, accept: 'application/json' },
        signal: AbortSignal.timeout(timeoutMs),
      });
    } catch (err) {
      throw new CellCallError(`cell unreachable: ${(err as Error).message}`, null);
    }
    const text = await res.text();
    let body: unknown = text;
    try {
      body = JSON.parse(text);
    } catch {}
    if (!res.ok) {
      const msg = (body as { error?: { code?: string; message?: string } })?.error;
      throw new CellCallError(
        `cell answered ${res.status}${msg ? ` ${msg.code}: ${msg.message}` : ''}`,
        res.status,
        body,
      );
    }
    return body;
  };
  const base = (cell: CellTarget) => cell.baseUrl.replace(/\/+$/, '');
  return {
    async loadEvent(cell, body) {
      const answer = await call(
        `${base(cell)}/internal/events/${body.eventId}`,
        { method: 'PUT', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) },
        o.timeoutMs,
      );
      const parsed = EventLoadAnswer.safeParse(answer);
      if (!parsed.success) throw new CellCallError('cell load answer does not match the contract', 200, answer);
      return parsed.data;
    },
    async setSales(cell, eventId, body) {
      const answer = await call(
        `${base(cell)}/internal/events/${eventId}/sales`,
        { method: 'PUT', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) },
        o.timeoutMs,
      );
      const parsed = SalesStatusAnswer.safeParse(answer);
      if (!parsed.success) throw new CellCallError('cell sales answer does not match the contract', 200, answer);
      return parsed.data;
    },
    async refundOrder(cell, eventId, orderId, body) {
      const answer = await call(
        `${base(cell)}/internal/events/${eventId}/orders/${orderId}/refund`,
        { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) },
        o.timeoutMs,
      );
      const parsed = RefundOrderAnswer.safeParse(answer);
      if (!parsed.success) throw new CellCallError('cell refund answer does not match the contract', 200, answer);
      return parsed.data;
    },
    async revoke(cell, notice) {
      const answer = await call(
        `${base(cell)}/internal/revocations`,
        { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(notice) },
        Math.min(o.timeoutMs, REVOKE_TIMEOUT_MS),
      );
      const parsed = RevocationNoticeAnswer.safeParse(answer);
      if (!parsed.success) throw new CellCallError('cell revocation answer does not match the contract', 200, answer);
      return parsed.data;
    },
    async signals(cell) {
      const answer = await call(`${base(cell)}/internal/signals`, { method: 'GET' }, o.signalsTimeoutMs ?? 2000);
      const parsed = CellSignals.safeParse(answer);
      if (!parsed.success) throw new CellCallError('cell signals do not match the contract', 200, answer);
      return parsed.data;
    },
  };
}
