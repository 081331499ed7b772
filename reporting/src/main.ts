import { configOrExit, createLogger, onShutdown } from '@onsale/contracts';
import { ReportingConfig } from './config';
import { startReporter } from './reporter';

const config = configOrExit('reporting', ReportingConfig);
const log = createLogger({ role: 'reporting' }, config.LOG_LEVEL);
/** The crash failpoint: as `kill -9` at that boundary, so nothing runs after it (no exit handler, no commit). */
function killBeforeCommit(at: ReportingConfig['FAILPOINT_KILL_BEFORE_COMMIT']) {
  if (!at) return undefined;
  let batches = 0;
  return (source: string) => {
    if (source !== at.source || ++batches !== at.nth) return;
    process.stderr.write(`failpoint reporting.before-commit: ${source} batch ${batches}, SIGKILL\n`);
    process.kill(process.pid, 'SIGKILL');
  };
}

const reporter = await startReporter(config, log, {
  beforeCommit: killBeforeCommit(config.FAILPOINT_KILL_BEFORE_COMMIT),
});
log.info('reporting consumer started', { bucket: config.S3_BUCKET, prefix: config.REPORTING_PREFIX });
onShutdown(log, () => reporter.stop(), 20_000);
