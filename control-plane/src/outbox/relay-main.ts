import { CONTROL_PLANE_ROLES } from '../runtime/roles';
import { runRole } from '../runtime/start';
import { startFactRelay } from './relay-role';

await runRole(CONTROL_PLANE_ROLES.factRelay, startFactRelay);
