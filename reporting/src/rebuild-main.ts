import { createPool } from '@onsale/aws-auth';
import { configOrExit, createLogger } from '@onsale/contracts';
import { ReportingConfig } from './config';
import { rebuildProjections } from './rebuild';
import { objectStoreFromConfig } from './s3';

const config = configOrExit('reporting-rebuild', ReportingConfig);
const log = createLogger({ role: 'reporting-rebuild' }, config.LOG_LEVEL);
// The same database connection as the consumer's (IAM authentication in a deployed stack).
const pool = createPool(config.DATABASE_URL_CONTROL_PLANE, config, { max: 2 });
const store = objectStoreFromConfig(config);
const facts = await rebuildProjections(pool, store, config.REPORTING_PREFIX);
log.info('projections rebuilt from S3', { facts });
await pool.end();
