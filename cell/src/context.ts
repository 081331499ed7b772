import type { Logger } from '@onsale/contracts';
import type { Database } from './db/client';
import type { WriteContext } from './db/tx';

/** What every domain verb of the cell receives: its database, identity and logger. */
export interface CellContext extends WriteContext {
  database: Database;
  log: Logger;
  now?: () => Date;
}
