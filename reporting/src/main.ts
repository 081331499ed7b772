import {
  configOrExit,
  createLogger,
  loopHealth,
  onShutdown,
  type ReadinessProbe,
  serveHealth,
} from '@onsale/contracts';
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

// Ready while the registry poll keeps succeeding: a cell whose topic cannot be read is retried on its own and
// does not make the whole consumer unready. Not ready before the first poll (the projections migrated, the facts read).
const polls = loopHealth(Math.max(15_000, 3 * config.REGISTRY_POLL_MS));
let started = false;
const probes = new Map<string, ReadinessProbe>([
  ['start', () => ({ ready: started })],
  ['registry', polls.probe],
]);
const health = config.HEALTH_PORT === undefined ? null : serveHealth(config.HEALTH_HOST, config.HEALTH_PORT, probes);
const reporter = await startReporter(config, log, {
  beforeCommit: killBeforeCommit(config.FAILPOINT_KILL_BEFORE_COMMIT),
  onRegistryPoll: polls.succeeded,
});
started = true;
log.info('reporting consumer started', { bucket: config.S3_BUCKET, prefix: config.REPORTING_PREFIX });
onShutdown(
  log,
  async () => {
    await reporter.stop();
    health?.close();
  },
  20_000,
);
