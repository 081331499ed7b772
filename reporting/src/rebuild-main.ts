import { configOrExit, createLogger } from '@onsale/contracts';
import pg from 'pg';
import { ReportingConfig } from './config';
import { rebuildProjections } from './rebuild';
import { createObjectStore } from './s3';

const config = configOrExit('reporting-rebuild', ReportingConfig);
const log = createLogger({ role: 'reporting-rebuild' }, config.LOG_LEVEL);
const pool = new pg.Pool({ connectionString: config.DATABASE_URL_CONTROL_PLANE, max: 2 });
const store = createObjectStore({
  bucket: config.S3_BUCKET,
  region: config.S3_REGION,
  endpoint: config.S3_ENDPOINT,
  accessKeyId: config.S3_ACCESS_KEY_ID,
  secretAccessKey: config.S3_SECRET_ACCESS_KEY,
});
const facts = await rebuildProjections(pool, store, config.REPORTING_PREFIX);
log.info('projections rebuilt from S3', { facts });
await pool.end();
