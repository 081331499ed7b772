import { CELL_ROLES } from '../runtime/roles';
import { runRole } from '../runtime/worker';
import { startSaga } from './role';

await runRole(CELL_ROLES.saga, startSaga);
