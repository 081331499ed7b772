import { createLogger } from '@onsale/contracts';
import { loadReportingConfig } from './config';
import { startReporter } from './reporter';

let config: ReturnType<typeof loadReportingConfig>;
try {
  config = loadReportingConfig();
} catch (err) {
  console.error((err as Error).message);
  process.exit(1);
}
const log = createLogger({ role: 'reporting' }, config.LOG_LEVEL);
const reporter = await startReporter(config, log);
log.info('reporting consumer started', { bucket: config.S3_BUCKET, prefix: config.REPORTING_PREFIX });
for (const sig of ['SIGTERM', 'SIGINT'] as const) {
  process.on(sig, async () => {
    const deadline = setTimeout(() => process.exit(1), 20_000);
    deadline.unref();
    await reporter.stop();
    process.exit(0);
  });
}
