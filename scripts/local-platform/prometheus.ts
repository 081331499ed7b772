import { execFileSync } from 'node:child_process';
import { mkdirSync, renameSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { repoRoot } from './process';

/** Who Prometheus scrapes, by job: each process that serves /metrics, added and removed as processes come and go. */
export type ScrapeJob = 'cell-api' | 'cell-worker' | 'control-plane' | 'router';
const JOBS: ScrapeJob[] = ['cell-api', 'cell-worker', 'control-plane', 'router'];

export function prometheusAvailable(): boolean {
  try {
    execFileSync('prometheus', ['--version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

/**
 * A real Prometheus for the local platform: the repository's alert rules (or a test's), a
 * scrape every `intervalSeconds`, and one file of targets per job that the launcher rewrites
 * whenever a process starts or stops (Prometheus re-reads them by itself).
 */
export function prometheusSetup(
  dir: string,
  options: { port: number; ruleFiles?: string[]; intervalSeconds?: number },
) {
  mkdirSync(resolve(dir, 'data'), { recursive: true });
  const interval = `${options.intervalSeconds ?? 2}s`;
  const ruleFiles = options.ruleFiles ?? [resolve(repoRoot, 'ops/prometheus/alerts.yml')];
  const config = [
    'global:',
    `  scrape_interval: ${interval}`,
    `  evaluation_interval: ${interval}`,
    'rule_files:',
    ...ruleFiles.map((f) => `  - ${JSON.stringify(f)}`),
    'scrape_configs:',
    ...JOBS.flatMap((job) => [
      `  - job_name: ${job}`,
      '    file_sd_configs:',
      `      - files: [${JSON.stringify(resolve(dir, `targets-${job}.json`))}]`,
      `        refresh_interval: ${interval}`,
    ]),
  ].join('\n');
  writeFileSync(resolve(dir, 'prometheus.yml'), `${config}\n`);
  const targets = new Map<string, { job: ScrapeJob; address: string; labels: Record<string, string> }>();
  const writeTargets = () => {
    for (const job of JOBS) {
      const entries = [...targets.values()]
        .filter((t) => t.job === job)
        .map((t) => ({ targets: [t.address], labels: t.labels }));
      const file = resolve(dir, `targets-${job}.json`);
      writeFileSync(`${file}.tmp`, JSON.stringify(entries));
      renameSync(`${file}.tmp`, file);
    }
  };
  writeTargets();
  return {
    url: `http://127.0.0.1:${options.port}`,
    command: [
      'prometheus',
      `--config.file=${resolve(dir, 'prometheus.yml')}`,
      `--storage.tsdb.path=${resolve(dir, 'data')}`,
      `--web.listen-address=127.0.0.1:${options.port}`,
      '--storage.tsdb.retention.time=1d',
    ],
    add(name: string, job: ScrapeJob, address: string, labels: Record<string, string> = {}) {
      targets.set(name, { job, address, labels: { process: name, ...labels } });
      writeTargets();
    },
    remove(name: string) {
      targets.delete(name);
      writeTargets();
    },
  };
}
