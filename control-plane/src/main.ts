import { startApi } from './api-role';
import { CONTROL_PLANE_ROLES } from './runtime/roles';
import { runRole } from './runtime/start';

await runRole(CONTROL_PLANE_ROLES.api, startApi);
