import { CELL_ROLES } from '../runtime/roles';
import { runRole } from '../runtime/worker';
import { startPayments } from './role';

await runRole(CELL_ROLES.payments, startPayments);
