import { CELL_ROLES } from '../runtime/roles';
import { runRole } from '../runtime/worker';
import { startReconciler } from './role';

await runRole(CELL_ROLES.reconciler, startReconciler);
