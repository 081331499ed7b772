import type { CellSignals } from '@onsale/contracts';
import type { CellContext } from '../context';
import type { Verifiers } from '../identity/verify';
import type { Availability } from '../inventory/availability';

/** Everything a route may call, built once per process and handed over through the context. */
export interface CellServices {
  ctx: CellContext;
  verifiers: Verifiers;
  availability: (eventId: string) => Promise<Availability>;
  signals: () => Promise<CellSignals>;
  internalToken: string;
  holdLatency: { record(ms: number): void };
  ready: () => Promise<boolean>;
}
