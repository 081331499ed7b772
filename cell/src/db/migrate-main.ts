import { parseEnv } from '@onsale/contracts';
import { CellMigrateConfig } from '../config';
import { migrateCell } from './migrate';

const config = parseEnv(CellMigrateConfig);
await migrateCell(
  config.DATABASE_URL,
  config.CELL_ID,
  config.CELL_EPOCH,
  config,
  config.DATABASE_ROLE_USERS?.split(',') ?? [],
);
console.log(JSON.stringify({ msg: 'cell migrated', cellId: config.CELL_ID }));
