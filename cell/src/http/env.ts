import type { Logger } from '@onsale/contracts';
import type { CellServices } from './services';

export interface CellEnv {
  Variables: {
    requestId: string;
    correlationId: string;
    log: Logger;
    services: CellServices;
    /** Set by buyerAuth on buyer routes. */
    userId: string;
    /** The buyer's address, when their token carries one (set by buyerAuth). */
    buyerEmail?: string;
  };
}
