import { parseEnv } from '@onsale/contracts';
import { CellBaseConfig } from '../config';
import { migrateCell } from './migrate';

const config = parseEnv(CellBaseConfig.pick({ CELL_ID: true, CELL_EPOCH: true, DATABASE_URL: true }));
await migrateCell(config.DATABASE_URL, config.CELL_ID, config.CELL_EPOCH);
console.log(JSON.stringify({ msg: 'cell migrated', cellId: config.CELL_ID }));
