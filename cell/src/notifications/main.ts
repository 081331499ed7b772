import { CELL_ROLES } from '../runtime/roles';
import { runRole } from '../runtime/worker';
import { startNotifications } from './role';

await runRole(CELL_ROLES.notifications, startNotifications);
