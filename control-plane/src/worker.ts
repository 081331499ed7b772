import { CONTROL_PLANE_ROLES } from './runtime/roles';
import { runRole } from './runtime/start';
import { startWorker } from './worker-role';

await runRole(CONTROL_PLANE_ROLES.worker, startWorker);
