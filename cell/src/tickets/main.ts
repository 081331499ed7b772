import { CELL_ROLES } from '../runtime/roles';
import { runRole } from '../runtime/worker';
import { startTickets } from './role';

await runRole(CELL_ROLES.tickets, startTickets);
