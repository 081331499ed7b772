import {
  EnvelopeError,
  parseControlPlaneFact,
  parseEnvelope,
  type SaleContext,
  type TypedEnvelope,
} from '@onsale/contracts';

/** What happened, as reporting counts it. */
export const FACT_KINDS = [
  'held',
  'paid',
  'declined',
  'expired',
  'released',
  'canceled',
  'refunded',
  'ticketed',
  'queued',
  'admitted',
  'release_decided',
] as const;
export type FactKind = (typeof FACT_KINDS)[number];

export interface SeatFact {
  seatId: string;
  section: string;
  tier: string | null;
  price: number;
}

/** The general-admission places of one area an order holds: the area is its section in the reports. */
export interface GaFact {
  areaId: string;
  area: string;
  tier: string;
  quantity: number;
  price: number;
}

/** One immutable fact: a row of a Parquet object, and the input of every projection. */
export interface Fact {
  factId: string;
  /** The cell id, or `control-plane`. */
  source: string;
  partition: number;
  offset: bigint;
  kind: FactKind;
  /** `unknown` for v1 cell events, which carry no tenant: kept, never counted. */
  tenantId: string;
  eventId: string;
  orderId: string | null;
  occurredAt: Date;
  amount: bigint | null;
  currency: string | null;
  seats: SeatFact[] | null;
  /** Null for a fact of seats only, and for every fact published before GA places were counted. */
  ga: GaFact[] | null;
  count: number | null;
  detail: string | null;
}

export const UNKNOWN_TENANT = 'unknown';
export const CONTROL_PLANE_SOURCE = 'control-plane';

const CELL_KINDS: Partial<Record<TypedEnvelope['eventType'], FactKind>> = {
  HoldCreated: 'held',
  PaymentCaptured: 'paid',
  PaymentFailed: 'declined',
  HoldExpired: 'expired',
  HoldReleased: 'released',
  Refunded: 'refunded',
  TicketIssued: 'ticketed',
};

/**
 * The reason the cell gives a hold it releases because the promoter cancelled the event
 * (cell/src/inventory/sales-status.ts): that order ends cancelled, not released by its buyer.
 */
const EVENT_CANCELED = 'event_canceled';

export interface RawMessage {
  source: string;
  partition: number;
  offset: string;
  value: string;
}

/**
 * The fact a message carries, or null when reporting does not count it (a saga step such as
 * OrderConfirmed, or a message no contract parses: those belong to the saga's dead letters).
 */
export function toFact(m: RawMessage): Fact | null {
  let raw: unknown;
  try {
    raw = JSON.parse(m.value);
  } catch {
    return null;
  }
  const at = { source: m.source, partition: m.partition, offset: BigInt(m.offset) };
  if (m.source === CONTROL_PLANE_SOURCE) {
    let f: ReturnType<typeof parseControlPlaneFact>;
    try {
      f = parseControlPlaneFact(raw);
    } catch {
      return null;
    }
    const base = {
      ...at,
      factId: f.eventId,
      tenantId: f.payload.tenantId,
      eventId: f.payload.eventId,
      orderId: null,
      occurredAt: new Date(f.occurredAt),
      amount: null,
      currency: null,
      seats: null,
      ga: null,
      count: null,
      detail: null,
    };
    switch (f.eventType) {
      case 'QueueJoined':
        return { ...base, kind: 'queued', count: 1 };
      case 'BuyersAdmitted':
        return { ...base, kind: 'admitted', count: f.payload.count };
      case 'ReleaseDecided': {
        const { oldRate, newRate, reason, cellId } = f.payload;
        return { ...base, kind: 'release_decided', detail: JSON.stringify({ cellId, oldRate, newRate, reason }) };
      }
    }
  }
  let e: TypedEnvelope;
  try {
    e = parseEnvelope(raw);
  } catch (err) {
    if (err instanceof EnvelopeError) return null;
    throw err;
  }
  const payload = e.payload as { sale?: SaleContext; eventId?: string; seatIds?: string[]; reason?: string };
  const kind =
    e.eventType === 'HoldReleased' && payload.reason === EVENT_CANCELED ? 'canceled' : CELL_KINDS[e.eventType];
  if (!kind) return null;
  const sale = payload.sale;
  return {
    ...at,
    factId: e.eventId,
    kind,
    tenantId: sale?.tenantId ?? UNKNOWN_TENANT,
    eventId: sale?.eventId ?? payload.eventId ?? UNKNOWN_TENANT,
    orderId: e.aggregateId,
    occurredAt: new Date(e.occurredAt),
    amount: sale ? BigInt(sale.amount) : null,
    currency: sale?.currency ?? null,
    seats: sale ? sale.seats : null,
    ga: sale?.ga ?? null,
    count: null,
    detail: null,
  };
}

/** The places a fact's order holds: its seats and GA places (a fact of seats only, or an old one, counts its seat ids). */
export const factPlaces = ({ seats, ga }: Pick<Fact, 'seats' | 'ga'>): number =>
  (seats?.length ?? 0) + (ga ?? []).reduce((n, g) => n + g.quantity, 0);
