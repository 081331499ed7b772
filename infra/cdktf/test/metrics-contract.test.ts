import { metrics as catalog } from '@onsale/contracts/runtime/metrics';
import { beforeAll, describe, expect, it } from 'vitest';
import { METRICS_SIDECAR_IMAGE, METRICS_SIDECAR_NAME } from '../src/constructs/metrics-sidecar';
import { CELL_DIMENSION, CELL_NAMESPACE, CONTROL_PLANE_NAMESPACE } from '../src/metrics';
import { defaultManifest } from './support/manifests';
import { allContainerDefinitions, type Block, resources, type Synthesized, synthPlatform } from './support/terraform';

/** The application's metrics, by name, with the labels each carries (every series also has role and cell). */
const emitted = new Map(
  catalog.registry
    .getMetricsAsArray()
    .map((m) => [m.name, new Set([...((m as unknown as { labelNames?: string[] }).labelNames ?? []), 'role', 'cell'])]),
);

/**
 * Metrics AWS publishes about its own services, which no application emits: the only other thing an alarm
 * may read. Each is named here, so a typo in one is as visible as a metric missing from the catalog.
 */
const AWS_METRICS: Record<string, readonly string[]> = {
  'AWS/RDS': ['DatabaseConnections', 'MaxDatabaseConnectionsAllowed', 'Deadlocks', 'AuroraGlobalDBReplicationLag'],
  'AWS/ApplicationELB': ['HTTPCode_Target_5XX_Count'],
  'AWS/ElastiCache': ['DatabaseMemoryUsagePercentage'],
  'AWS/Kafka': ['ReplicationLatency'],
};
const APP_NAMESPACES = [CELL_NAMESPACE, CONTROL_PLANE_NAMESPACE];

interface MetricRead {
  where: string;
  namespace: string;
  name: string;
  dimensions: string[];
}

function alarmReads(stackName: string, name: string, alarm: Block): MetricRead[] {
  const where = `${stackName}/${String(alarm.alarm_name ?? name)}`;
  if (alarm.metric_name) {
    return [
      {
        where,
        namespace: String(alarm.namespace),
        name: String(alarm.metric_name),
        dimensions: Object.keys((alarm.dimensions as Record<string, string> | undefined) ?? {}),
      },
    ];
  }
  return ((alarm.metric_query as Block[] | undefined) ?? []).flatMap((q) => {
    const m = q.metric as Block | undefined;
    if (!m) return [];
    return [
      {
        where,
        namespace: String(m.namespace),
        name: String(m.metric_name),
        dimensions: Object.keys((m.dimensions as Record<string, string> | undefined) ?? {}),
      },
    ];
  });
}

function policyReads(stackName: string, name: string, policy: Block): MetricRead[] {
  const config = (policy.target_tracking_scaling_policy_configuration ?? {}) as Block;
  const custom = config.customized_metric_specification as Block | undefined;
  if (!custom) return [];
  return [
    {
      where: `${stackName}/${name}`,
      namespace: String(custom.namespace),
      name: String(custom.metric_name),
      dimensions: ((custom.dimensions as { name: string }[] | undefined) ?? []).map((d) => d.name),
    },
  ];
}

describe('every alarm and scaling policy reads a metric something emits', () => {
  let synth: Synthesized;
  let reads: MetricRead[];
  beforeAll(() => {
    synth = synthPlatform(defaultManifest());
    reads = [...synth.stacks.values()].flatMap(({ name, json }) => [
      ...resources(json, 'aws_cloudwatch_metric_alarm').flatMap((r) => alarmReads(name, r.name, r.body)),
      ...resources(json, 'aws_appautoscaling_policy').flatMap((r) => policyReads(name, r.name, r.body)),
    ]);
  });

  it('reads the catalog in contracts/src/runtime/metrics.ts', () => {
    expect(emitted.size).toBeGreaterThan(20);
    expect(emitted.has('onsale_outbox_oldest_unpublished_age_seconds')).toBe(true);
  });

  it('matches each application metric to the catalog by name, and each dimension to one of its labels', () => {
    const app = reads.filter((r) => !r.namespace.startsWith('AWS/'));
    expect(app.length).toBeGreaterThan(20);
    const problems: string[] = [];
    for (const read of app) {
      if (!APP_NAMESPACES.includes(read.namespace)) problems.push(`${read.where}: namespace ${read.namespace}`);
      const labels = emitted.get(read.name);
      if (!labels) {
        problems.push(`${read.where}: ${read.name} is not in the catalog`);
        continue;
      }
      for (const dimension of read.dimensions) {
        if (!labels.has(dimension)) problems.push(`${read.where}: ${read.name} has no label ${dimension}`);
      }
      if (!read.dimensions.includes(CELL_DIMENSION)) problems.push(`${read.where}: not scoped to a cell`);
    }
    expect(problems).toEqual([]);
  });

  it('reads nothing else but metrics AWS publishes about its own services', () => {
    const unknown = reads
      .filter((r) => r.namespace.startsWith('AWS/'))
      .filter((r) => !AWS_METRICS[r.namespace]?.includes(r.name))
      .map((r) => `${r.where}: ${r.namespace} ${r.name}`);
    expect(unknown).toEqual([]);
  });

  it('runs the collector beside every long-running process, publishing into its stack namespace', () => {
    for (const { name, json } of synth.stacks.values()) {
      if (name === 'edge') continue;
      const namespace = name === 'control-plane' ? CONTROL_PLANE_NAMESPACE : CELL_NAMESPACE;
      const families = new Map(resources(json, 'aws_ecs_task_definition').map((t) => [t.name, t.body]));
      for (const { body: service } of resources(json, 'aws_ecs_service')) {
        const ref = String(service.task_definition).match(/aws_ecs_task_definition\.([^.]+)\.arn/)?.[1] ?? '';
        const task = families.get(ref);
        expect(task, `${name}/${String(service.name)}`).toBeDefined();
        const containers = allContainerDefinitions(task as Block);
        const sidecar = containers.find((c) => c.name === METRICS_SIDECAR_NAME);
        // The reporting consumer and the fact relay have no listener yet: nothing to scrape.
        if (!sidecar) {
          expect(['reporting', 'fact-relay'], `${name}/${String(service.name)} has no collector`).toContain(
            service.name,
          );
          continue;
        }
        expect(sidecar.image).toBe(METRICS_SIDECAR_IMAGE);
        const config = JSON.parse(sidecar.environment.find((e) => e.name === 'AOT_CONFIG_CONTENT')?.value ?? '{}') as {
          exporters: { awsemf: { namespace: string; metric_declarations: { metric_name_selectors: string[] }[] } };
        };
        expect(config.exporters.awsemf.namespace).toBe(namespace);
        const selectors = config.exporters.awsemf.metric_declarations.flatMap((d) => d.metric_name_selectors);
        for (const metric of emitted.keys()) {
          if (metric.startsWith('onsale_')) expect(selectors.some((s) => new RegExp(s).test(metric))).toBe(true);
        }
      }
    }
  });
});
