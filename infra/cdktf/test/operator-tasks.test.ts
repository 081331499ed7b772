import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { processCommand } from '@onsale/processes';
import { beforeAll, describe, expect, it } from 'vitest';
import { METRICS_SIDECAR_NAME } from '../src/constructs/metrics-sidecar';
import { defaultManifest } from './support/manifests';
import {
  allContainerDefinitions,
  type Block,
  type PolicyStatement,
  policyStatements,
  resources,
  type StackJson,
  type Synthesized,
  stack,
  synthPlatform,
} from './support/terraform';

const repoRoot = resolve(import.meta.dirname, '../../..');

/** A task definition by its family, with its process's container. */
function taskByFamily(json: StackJson, family: string) {
  const found = resources(json, 'aws_ecs_task_definition').find(({ body }) => body.family === family);
  if (!found) throw new Error(`no task definition ${family}`);
  const [container] = allContainerDefinitions(found.body).filter((c) => c.name !== METRICS_SIDECAR_NAME);
  if (!container) throw new Error(`${family} has no container`);
  const env = Object.fromEntries(container.environment.map((v) => [v.name, v.value]));
  return { body: found.body, container, env, secrets: container.secrets.map((s) => s.name) };
}

/** The statements of a task's task role (not its execution role): what the process itself may do. */
const taskRole = (json: StackJson, role: string): PolicyStatement[] =>
  policyStatements(json).filter((s) => s.where.includes(`task-${role}_task-role_policy`));

const allows = (statements: PolicyStatement[], action: string, resource: RegExp) =>
  statements.some((s) => s.actions.includes(action) && s.resources.some((r) => resource.test(r)));

const output = (json: StackJson, name: string) => (json.output as Record<string, Block> | undefined)?.[name]?.value;

describe('operator tasks: dead-letter replay and event evacuation, run from their runbooks', () => {
  let synth: Synthesized;
  beforeAll(() => {
    synth = synthPlatform(defaultManifest());
  });

  it('defines the dead-letter replay in every cell, signed in to MSK with IAM as the services are', () => {
    for (const cellId of ['c1', 'c2']) {
      const { json } = stack(synth, `cell-${cellId}`);
      const replay = taskByFamily(json, `onsale-${cellId}-replay-dead-letters`);
      expect(replay.container.command).toEqual(processCommand('cell-replay-dead-letters'));
      expect(replay.env).toMatchObject({ CELL_ID: cellId, KAFKA_AUTH: 'aws-msk-iam' });
      expect(replay.env.KAFKA_BROKERS).toMatch(/bootstrap_brokers_sasl_iam/);
      expect(replay.secrets).toEqual([]);

      const role = taskRole(json, 'replay-dead-letters');
      const topic = (name: string) => new RegExp(`:topic/onsale-${cellId}/.*/${name.replaceAll('.', '\\.')}$`);
      expect(allows(role, 'kafka-cluster:Connect', /aws_msk_cluster\.cell_kafka_cluster/)).toBe(true);
      expect(allows(role, 'kafka-cluster:WriteDataIdempotently', /aws_msk_cluster\.cell_kafka_cluster/)).toBe(true);
      expect(allows(role, 'kafka-cluster:ReadData', topic(`cell.${cellId}.purchase.dlq`))).toBe(true);
      expect(allows(role, 'kafka-cluster:WriteData', topic(`cell.${cellId}.purchase`))).toBe(true);
      for (const action of ['kafka-cluster:DescribeGroup', 'kafka-cluster:AlterGroup'])
        expect(allows(role, action, new RegExp(`:group/onsale-${cellId}/.*/${cellId}\\.dlq-\\*$`))).toBe(true);
      // Nothing more: it reads no purchase topic, writes no DLQ, joins no consumer's group, creates no topic.
      expect(allows(role, 'kafka-cluster:ReadData', topic(`cell.${cellId}.purchase`))).toBe(false);
      expect(allows(role, 'kafka-cluster:WriteData', topic(`cell.${cellId}.purchase.dlq`))).toBe(false);
      expect(role.flatMap((s) => s.actions)).not.toContain('kafka-cluster:CreateTopic');
      expect(allows(role, 'kafka-cluster:AlterGroup', new RegExp(`/${cellId}\\.saga$`))).toBe(false);
    }
  });

  it("defines the evacuation in the control plane with the API's database user, Redis user and secrets", () => {
    const { json } = stack(synth, 'control-plane');
    const evacuate = taskByFamily(json, 'onsale-cp-evacuate-event');
    expect(evacuate.container.command).toEqual(processCommand('control-plane-evacuate-event'));
    expect(evacuate.env).toMatchObject({ DATABASE_AUTH: 'iam', REDIS_AUTH: 'iam' });
    expect(evacuate.env.DATABASE_URL_CONTROL_PLANE).toMatch(/onsale_cp_api@/);
    expect(evacuate.secrets.sort()).toEqual(['CELL_INTERNAL_TOKEN', 'SIGNING_KEY_KEK', 'SIGNING_KEY_KEK_PREVIOUS']);
    const role = taskRole(json, 'evacuate-event');
    expect(allows(role, 'rds-db:connect', /dbuser:.*\/onsale_cp_api$/)).toBe(true);
    expect(role.some((s) => s.actions.includes('elasticache:Connect'))).toBe(true);
  });

  it('outputs what `aws ecs run-task` needs: cluster, private subnets, and each task with its security group', () => {
    const expected: [string, string][] = [
      ['control-plane', 'evacuate-event'],
      ['cell-c1', 'replay-dead-letters'],
      ['cell-c2', 'replay-dead-letters'],
    ];
    for (const [name, role] of expected) {
      const { json } = stack(synth, name);
      expect(output(json, 'ecs_cluster'), name).toBeDefined();
      expect(output(json, 'private_subnet_ids'), name).toHaveLength(3);
      const task = (output(json, 'operator_tasks') as Record<string, Block>)[role];
      expect(task, `${name} operator_tasks.${role}`).toMatchObject({
        family: expect.stringMatching(new RegExp(`-${role}$`)),
        securityGroup: expect.stringMatching(/^\$\{aws_security_group\./),
        container: role,
      });
    }
  });

  it("names in each runbook a run-task whose family, cluster and container are the stacks'", () => {
    const runbooks: [string, string, string][] = [
      ['runbooks/replay-dead-letters.md', 'cell-c1', 'onsale-c1-replay-dead-letters'],
      ['runbooks/evacuate-an-event.md', 'control-plane', 'onsale-cp-evacuate-event'],
    ];
    for (const [file, name, family] of runbooks) {
      const text = readFileSync(resolve(repoRoot, file), 'utf8');
      const runTask = text.match(/aws ecs run-task[^`]*?(?=\n```)/s)?.[0];
      expect(runTask, `${file} has an aws ecs run-task command`).toBeDefined();
      const mentioned = runTask?.match(/--task-definition\s+(\S+)/)?.[1]?.replace(/\$\{?CELL\}?/, 'c1');
      expect(mentioned, file).toBe(family);
      // The network configuration comes from the stack's outputs, not from ids pasted in.
      for (const out of ['ecs_cluster', 'private_subnet_ids', 'operator_tasks'])
        expect(text, `${file} reads ${out}`).toContain(out);
      taskByFamily(stack(synth, name).json, family);
    }
  });
});

describe('long-running services: a health check, and traces to the collector beside them', () => {
  let synth: Synthesized;
  beforeAll(() => {
    synth = synthPlatform(defaultManifest());
  });

  const services = () =>
    [...synth.stacks.values()].flatMap(({ name, json }) => {
      const families = new Set(
        resources(json, 'aws_ecs_service').map(
          ({ body }) => String(body.task_definition).match(/task_definition\.([^.]+)\./)?.[1],
        ),
      );
      return resources(json, 'aws_ecs_task_definition')
        .filter(({ name: logical }) => families.has(logical))
        .map(({ body }) => ({
          stack: name,
          json,
          family: String(body.family),
          containers: allContainerDefinitions(body),
        }));
    });

  it('gives every service container a health check: the HTTP ones on their port, the workers on HEALTH_PORT', () => {
    const all = services();
    const families = all.map((s) => s.family);
    // The fact relay and the reporting consumer among them.
    expect(families).toEqual(expect.arrayContaining(['onsale-cp-fact-relay', 'onsale-cp-reporting']));
    for (const { family, containers } of all) {
      const [app] = containers.filter((c) => c.name !== METRICS_SIDECAR_NAME) as ((typeof containers)[number] & {
        healthCheck?: { command: string[] };
        portMappings?: unknown[];
      })[];
      expect(app?.healthCheck, `${family} has a container health check`).toBeDefined();
      const env = Object.fromEntries(app!.environment.map((v) => [v.name, v.value]));
      const port = env.PORT ?? env.HEALTH_PORT;
      expect(port, family).toBeDefined();
      expect(app!.healthCheck!.command.join(' '), family).toContain(`127.0.0.1:${port}/healthz`);
    }
  });

  it("has the collector scrape a process's health port when it has one, else its HTTP port: the router's off the port CloudFront reaches", () => {
    const all = services();
    for (const { family, containers } of all) {
      const app = containers.find((c) => c.name !== METRICS_SIDECAR_NAME)!;
      const collector = containers.find((c) => c.name === METRICS_SIDECAR_NAME);
      if (!collector) continue;
      const env = Object.fromEntries(app.environment.map((v) => [v.name, v.value]));
      const config = JSON.parse(collector.environment.find((v) => v.name === 'AOT_CONFIG_CONTENT')?.value ?? '{}');
      const [job] = config.receivers.prometheus.config.scrape_configs;
      expect({ family, path: job.metrics_path, targets: job.static_configs[0].targets }).toEqual({
        family,
        path: '/metrics',
        targets: [`127.0.0.1:${env.HEALTH_PORT ?? env.PORT}`],
      });
    }
    // Only the port its load balancer forwards is mapped; its metrics are on its loopback health port.
    const router = all.find((s) => s.family === 'onsale-cp-router')!;
    const app = router.containers.find((c) => c.name !== METRICS_SIDECAR_NAME) as (typeof router.containers)[number] & {
      portMappings: { containerPort: number }[];
    };
    const env = Object.fromEntries(app.environment.map((v) => [v.name, v.value]));
    expect(env.HEALTH_PORT).toBeDefined();
    expect(env.HEALTH_PORT).not.toBe(env.PORT);
    expect(env.HEALTH_HOST).toBeUndefined();
    expect(app.portMappings.map((p) => String(p.containerPort))).toEqual([env.PORT]);
  });

  it('sends every service its spans to an OTLP collector beside it, which exports them to X-Ray with its task role', () => {
    for (const { json, family, containers } of services()) {
      const app = containers.find((c) => c.name !== METRICS_SIDECAR_NAME)!;
      const env = Object.fromEntries(app.environment.map((v) => [v.name, v.value]));
      expect(env, family).toMatchObject({
        OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318',
        OTEL_SERVICE_NAME: family,
        OTEL_TRACES_SAMPLER: 'parentbased_traceidratio',
      });
      const collector = containers.find((c) => c.name === METRICS_SIDECAR_NAME) as
        | { environment: { name: string; value: string }[] }
        | undefined;
      const config = JSON.parse(collector?.environment.find((v) => v.name === 'AOT_CONFIG_CONTENT')?.value ?? '{}');
      expect(config.receivers?.otlp?.protocols?.http?.endpoint, family).toBe('127.0.0.1:4318');
      expect(config.service?.pipelines?.traces, family).toEqual({
        receivers: ['otlp'],
        processors: ['batch'],
        exporters: ['awsxray'],
      });
      const role = family.replace(/^onsale-(cp|c\d+(-dr)?)-/, '');
      const statements = policyStatements(json).filter((s) => s.where.includes(`service-${role}_task-role_policy`));
      expect(
        statements.some((s) => s.actions.includes('xray:PutTraceSegments')),
        `${family} may put trace segments`,
      ).toBe(true);
    }
  });
});
