import { CELL_ROLES } from '../runtime/roles';
import { runRole } from '../runtime/worker';
import { startExpiry } from './role';

await runRole(CELL_ROLES.expiry, startExpiry);
