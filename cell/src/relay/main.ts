import { CELL_ROLES } from '../runtime/roles';
import { runRole } from '../runtime/worker';
import { startRelay } from './role';

await runRole(CELL_ROLES.relay, startRelay);
