import { readdirSync, readFileSync } from 'node:fs';
import { eventPayloads } from '@onsale/contracts/events';
import { metrics as catalog, routerMetrics } from '@onsale/contracts/runtime/metrics';
import { beforeAll, describe, expect, it } from 'vitest';
import { promotionOrphans } from '../src/promotion';
import { providerConfigs, providerOf } from '../src/synthesized';
import { defaultManifest } from './support/manifests';
import {
  allContainerDefinitions,
  type Block,
  resources,
  type StackJson,
  type Synthesized,
  stack,
  synthPlatform,
} from './support/terraform';

/**
 * What the runbooks name must exist: every CloudWatch alarm, Prometheus alert, metric and `aws ecs run-task`
 * task definition, checked against the synthesized stacks of the two-cell manifest with c1's DR standby, both
 * as a standby and promoted (the failover runbook runs the promoted stack's tasks), the application's metric
 * catalog and ops/prometheus/alerts.yml. A runbook names things in these shapes:
 * - an alarm: "the `<name>` alarm" or "the <hyphenated-name> alarm"; `<name>` is the full alarm name or the
 *   part after the stack's prefix, and `$VAR` / `<placeholder>` stand for any name segment;
 * - a Prometheus alert: a CamelCase word in backticks (an AWS metric a stack alarms on, or one of the cell's
 *   domain events in contracts/src/events.ts, also qualifies);
 * - a metric: a backticked snake_case name that starts `onsale_` or `router_`, or follows the word counter,
 *   gauge, histogram, metric or signal; `--metric-name <Name>` in a command;
 * - a one-off task: `aws ecs run-task … --task-definition <family or deploy_tasks key>`.
 */
const RUNBOOKS = new URL('../../../runbooks/', import.meta.url);
const runbooks = readdirSync(RUNBOOKS)
  .filter((file) => file.endsWith('.md'))
  .map((file) => ({ file, text: readFileSync(new URL(file, RUNBOOKS), 'utf8') }));

const prometheusAlerts = new Set(
  [
    ...readFileSync(new URL('../../../ops/prometheus/alerts.yml', import.meta.url), 'utf8').matchAll(/- alert: (\w+)/g),
  ].map((m) => m[1]),
);

function promotedManifest() {
  const base = defaultManifest();
  return {
    ...base,
    cells: base.cells.map((cell) =>
      cell.dr ? { ...cell, dr: { ...cell.dr, promoted: { epoch: (cell.epoch ?? 1) + 1 } } } : cell,
    ),
  };
}

/** `$CELL`, `${CELL}` and `<anything>` match one name segment (or several, for `<…>`). */
function namePattern(name: string, anchored: 'whole' | 'suffix'): RegExp {
  const parts = name.split(/(\$\{?[A-Z_]+\}?|<[^>]+>)/);
  const body = parts
    .map((part, i) => (i % 2 === 1 ? '[A-Za-z0-9._-]+' : part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')))
    .join('');
  return new RegExp(anchored === 'whole' ? `^${body}$` : `^(?:.+-)?${body}$`);
}

interface Named {
  readonly file: string;
  readonly name: string;
}

function named(pattern: RegExp): Named[] {
  return runbooks.flatMap(({ file, text }) => [...text.matchAll(pattern)].map((m) => ({ file, name: m[1] ?? '' })));
}

let standby: Synthesized;
let promoted: Synthesized;
let allStacks: StackJson[];
let metricNames: Set<string>;

beforeAll(async () => {
  standby = synthPlatform(defaultManifest());
  promoted = synthPlatform(promotedManifest());
  allStacks = [...standby.stacks.values(), stack(promoted, 'cell-c1-dr')].map((s) => s.json);
  const routerSeries = [...(await routerMetrics(() => null).render()).matchAll(/^# TYPE (\S+)/gm)].map((m) => m[1]);
  metricNames = new Set([...catalog.registry.getMetricsAsArray().map((m) => m.name), ...routerSeries] as string[]);
});

const alarmNames = () =>
  allStacks.flatMap((json) =>
    resources(json, 'aws_cloudwatch_metric_alarm').map(({ body }) => String(body.alarm_name)),
  );

/** Metric names the stacks' alarms read, AWS's own included. */
const alarmMetrics = () =>
  allStacks.flatMap((json) =>
    resources(json, 'aws_cloudwatch_metric_alarm').flatMap(({ body }) => [
      String(body.metric_name ?? ''),
      ...((body.metric_query as Block[] | undefined) ?? []).map((q) =>
        String((q.metric as Block | undefined)?.metric_name),
      ),
    ]),
  );

describe('every alarm, alert and metric a runbook names exists', () => {
  it('alarms are CloudWatch alarms of the synthesized stacks', () => {
    const alarms = alarmNames();
    const references = [...named(/`([^`\s]+)` alarm\b/g), ...named(/\bthe ([A-Za-z0-9]+(?:-[A-Za-z0-9]+)+) alarm\b/g)];
    expect(references.length).toBeGreaterThan(0);
    const missing = references.filter(({ name }) => !alarms.some((alarm) => namePattern(name, 'suffix').test(alarm)));
    expect(missing).toEqual([]);
  });

  it('CamelCase names are Prometheus alerts, AWS metrics a stack alarms on, or domain events', () => {
    const known = new Set([...prometheusAlerts, ...alarmMetrics(), ...Object.keys(eventPayloads)]);
    const references = named(/`([A-Z][a-z0-9]+(?:[A-Z][A-Za-z0-9]*)+)`/g);
    expect(references.length).toBeGreaterThan(0);
    expect(references.filter(({ name }) => !known.has(name))).toEqual([]);
  });

  it("metrics and signals are in the application's catalog, or read by an alarm", () => {
    const awsMetrics = new Set(alarmMetrics());
    const snake = '[a-z][a-z0-9]*(?:_[a-z0-9]+)+';
    const references = [
      ...named(/`((?:onsale|router)_[a-z0-9_]+)(?:\{[^}]*\})?`/g),
      ...named(
        new RegExp(
          `\\b(?:counter|gauge|histogram|metric|signal)s?\\b[^\`\\n]{0,20}\`(${snake})(?:\\{[^}]*\\})?\``,
          'g',
        ),
      ),
    ];
    const commands = named(/--metric-name (\S+)/g);
    expect(references.length).toBeGreaterThan(0);
    const base = (name: string) => name.replace(/_(bucket|sum|count)$/, '');
    expect(references.filter(({ name }) => !metricNames.has(name) && !metricNames.has(base(name)))).toEqual([]);
    expect(commands.filter(({ name }) => !awsMetrics.has(name) && !metricNames.has(name))).toEqual([]);
  });
});

describe('every `aws ecs run-task` a runbook names is a task definition of the stacks', () => {
  it('names a family, or a key of the deploy_tasks output, in a stack whose cluster matches', () => {
    const commands = runbooks.flatMap(({ file, text }) =>
      [...text.replaceAll(/\\\n\s*/g, ' ').matchAll(/aws ecs run-task\b[^\n`]*/g)].map((m) => ({
        file,
        command: m[0],
      })),
    );
    expect(commands.length).toBeGreaterThan(0);
    const problems = commands.flatMap(({ file, command }) => {
      const cluster = /--cluster\s+("[^"]+"|<[^>]+>|\S+)/.exec(command)?.[1]?.replaceAll('"', '') ?? '<any>';
      const taskDefinition = /--task-definition\s+("(?:[^"\\]|\\.)*"|\S+)/.exec(command)?.[1] ?? '';
      const stacks = allStacks.filter((json) =>
        resources(json, 'aws_ecs_cluster').some(({ body }) => namePattern(cluster, 'whole').test(String(body.name))),
      );
      if (stacks.length === 0) return [`${file}: no stack has an ECS cluster ${cluster}`];
      const key = /deploy_tasks(?:\s*\|\s*jq -r\s*)?\.(\w+)/.exec(taskDefinition)?.[1];
      if (key) {
        const found = stacks.some((json) => key in ((json.output?.deploy_tasks?.value as Block | undefined) ?? {}));
        return found ? [] : [`${file}: no deploy_tasks.${key} in a stack with cluster ${cluster}`];
      }
      const family = taskDefinition.replaceAll('"', '').replace(/:\d+$/, '');
      const found = stacks.some((json) =>
        resources(json, 'aws_ecs_task_definition').some(({ body }) =>
          namePattern(family, 'whole').test(String(body.family)),
        ),
      );
      return found ? [] : [`${file}: no task definition family ${family} in a stack with cluster ${cluster}`];
    });
    expect(problems).toEqual([]);
  });
});

describe('promoting the DR standby of c1', () => {
  it('leaves no resource in its state without its provider, once the runbook forgets what it lists', () => {
    const before = stack(standby, 'cell-c1-dr').json;
    const after = stack(promoted, 'cell-c1-dr').json;
    const orphans = promotionOrphans(before, after);
    // The standby owns the source cluster's policy through the primary region's provider; promotion drops it.
    expect(orphans).toContain('aws_msk_cluster_policy.source-cluster-access');

    const failover = runbooks.find(({ file }) => file === 'region-failover.md')?.text ?? '';
    const stateRm = /`terraform state rm ([^`]+)`/.exec(failover)?.[1] ?? '';
    const forgotten = [...stateRm.matchAll(/'([^']+)'/g)].map((m) => m[1]);
    expect(forgotten.sort()).toEqual(orphans);

    // What stays in the state after that step has a provider configuration in the promoted stack.
    const providers = providerConfigs(after);
    for (const blocks of [before.resource, before.data]) {
      for (const [type, byName] of Object.entries(blocks ?? {})) {
        for (const [name, body] of Object.entries(byName)) {
          const address = blocks === before.data ? `data.${type}.${name}` : `${type}.${name}`;
          if (forgotten.includes(address)) continue;
          const provider = providerOf(type, body);
          expect(provider === 'terraform' || providers.has(provider), `${address} (${provider})`).toBe(true);
        }
      }
    }
  });

  it("pulls every image from the DR region's own registry, standby and promoted", () => {
    for (const synth of [standby, promoted]) {
      const { json } = stack(synth, 'cell-c1-dr');
      const images = resources(json, 'aws_ecs_task_definition').flatMap(({ body }) =>
        allContainerDefinitions(body).map((c) => c.image),
      );
      const privateImages = images.filter((image) => image.includes('.dkr.ecr.'));
      expect(privateImages.length).toBeGreaterThan(0);
      for (const image of privateImages) expect(image).toMatch(/^\d{12}\.dkr\.ecr\.eu-central-1\.amazonaws\.com\//);
    }
  });
});
