import type { CellSignals } from '@onsale/contracts';
import type Stripe from 'stripe';
import type { CellContext } from '../context';
import type { Verifiers } from '../identity/verify';
import type { Availability, ServedDocument } from '../inventory/availability';
import type { TicketStore } from '../tickets/store';

/** Everything a route may call, built once per process and handed over through the context. */
export interface CellServices {
  ctx: CellContext;
  verifiers: Verifiers;
  availability: (eventId: string) => Promise<Availability>;
  /** The compact availability document (SeatBitmaps), serialized once per refresh with its ETag. */
  seatBitmaps: (eventId: string) => Promise<ServedDocument>;
  signals: () => Promise<CellSignals>;
  /** Sets the cell's ledger and backbone gauges from their sources, just before a scrape. */
  refreshMetrics: () => Promise<void>;
  internalToken: string;
  /** Public keys gate scanners verify tickets with. */
  ticketKeys: { keys: unknown[] };
  /** The ticket worker's bucket: order PDFs and the events' signed void lists. */
  ticketStore: TicketStore;
  holdLatency: { record(ms: number): void };
  ready: () => Promise<boolean>;
  /** Present when the cell takes Stripe webhooks: the client re-fetches intents, the secret verifies signatures. */
  stripe?: { client: Stripe; webhookSecret: string };
}
