/**
 * The load scenarios on this machine: starts a platform of its own (fresh databases, every process from
 * its bundle, 127.0.0.1 only; the services must be up), runs each scenario through the Node load generator,
 * writes a JSON report and an HTML page with latency-over-time and throughput charts per scenario under
 * load-tests/reports/, and stops everything it started, however it ends.
 *
 *   pnpm load [stampede|hot-section|webhook-storm|soak|all] [--form local|short]
 *
 * `local` is each scenario scaled to this 2-core machine (load-tests/scenarios/definition.ts); the soak
 * runs 30 minutes in it. `short` is the seconds-long form CI runs. Exit code 1 when a threshold or an
 * invariant fails (the reports say which).
 */
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { repoRoot } from '../../scripts/local-platform/process';
import { SCENARIOS, type ScenarioName } from '../scenarios/definition';
import { type LoadPlatform, startLoadPlatform } from './platform';
import { writeReport } from './report';
import { runScenario } from './scenarios';

export const REPORTS = resolve(repoRoot, 'load-tests/reports');

async function main() {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: { form: { type: 'string', default: 'local' } },
  });
  const form = values.form;
  if (form !== 'local' && form !== 'short') throw new Error(`--form is local or short, not ${form}`);
  const which = positionals[0] ?? 'all';
  const names = which === 'all' ? (Object.keys(SCENARIOS) as ScenarioName[]) : [which as ScenarioName];
  for (const n of names)
    if (!(n in SCENARIOS)) throw new Error(`no scenario ${n}: ${Object.keys(SCENARIOS).join(', ')}`);

  let platform: LoadPlatform | undefined;
  let stopping: Promise<void> | undefined;
  const stop = () => (stopping ??= platform?.stop() ?? Promise.resolve());
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => {
      console.error(`${signal}: stopping the platform this run started`);
      void stop().finally(() => process.exit(signal === 'SIGINT' ? 130 : 143));
    });
  }
  let failed = false;
  try {
    console.error('starting a platform of its own (fresh databases, bundles)…');
    platform = await startLoadPlatform();
    for (const name of names) {
      console.error(`${name} (${form})…`);
      const report = await runScenario(platform, name, form);
      const files = writeReport(report, REPORTS);
      failed ||= !report.passed;
      console.log(
        `${name}: ${report.passed ? 'passed' : 'FAILED'}; ${report.summary.all!.requests} requests, p99 ${report.summary.all!.p99Ms} ms; ${files.html}`,
      );
      for (const c of [...report.thresholds, ...report.invariants])
        console.log(`  ${c.ok ? 'ok  ' : 'FAIL'} ${c.name}: ${c.actual} (limit ${c.limit})`);
    }
  } finally {
    await stop();
  }
  process.exit(failed ? 1 : 0);
}

if (import.meta.url === `file://${process.argv[1]}`) {
  main().catch((err) => {
    console.error(err);
    process.exit(1);
  });
}
