import { beforeAll, describe, expect, it } from 'vitest';
import type { DeployPlan } from '../src/constructs/fargate-service';
import { parseManifest } from '../src/manifest';
import { defaultManifest } from './support/manifests';
import { type Block, resources, type StackJson, type Synthesized, stack, synthPlatform } from './support/terraform';

/** The stack's `deploy` output as Terraform will print it (references still unresolved). */
function planOf(json: StackJson): DeployPlan {
  const outputs = json.output as Record<string, { value: DeployPlan }> | undefined;
  const plan = outputs?.deploy?.value;
  if (!plan) throw new Error('the stack has no deploy output');
  return plan;
}

/** `${type.name.attribute}` → the resource it names, or undefined when the reference is to something else. */
function referenced(json: StackJson, ref: string, type: string, attribute: string): Block | undefined {
  const match = new RegExp(`^\\$\\{${type}\\.([^.]+)\\.${attribute}\\}$`).exec(ref);
  return match ? json.resource?.[type]?.[match[1] ?? ''] : undefined;
}

describe('the deploy plan each stack outputs for the deploy command', () => {
  const manifest = parseManifest(defaultManifest());
  let synth: Synthesized;
  beforeAll(() => {
    synth = synthPlatform(defaultManifest());
  });

  const stacksWithServices = () => [
    'control-plane',
    ...manifest.cells.map((c) => `cell-${c.id}`),
    ...manifest.cells.filter((c) => c.dr).map((c) => `cell-${c.id}-dr`),
  ];

  it('names what run-task needs: the cluster, the private subnets, each task definition and its security group', () => {
    for (const name of stacksWithServices()) {
      const { json } = stack(synth, name);
      const plan = planOf(json);
      expect(referenced(json, plan.cluster, 'aws_ecs_cluster', 'name'), name).toBeDefined();
      expect(plan.subnets, name).toHaveLength(3);
      for (const subnet of plan.subnets) {
        expect(referenced(json, subnet, 'aws_subnet', 'id'), name).toBeDefined();
        expect(subnet, name).toMatch(/_private-\d_/);
      }
      for (const task of plan.tasks) {
        const definition = referenced(json, task.taskDefinition, 'aws_ecs_task_definition', 'arn');
        expect(definition?.family, `${name}/${task.name}`).toMatch(new RegExp(`-${task.name}$`));
        expect(task.securityGroups, `${name}/${task.name}`).toHaveLength(1);
        const group = referenced(json, task.securityGroups[0] ?? '', 'aws_security_group', 'id');
        expect(group?.name, `${name}/${task.name}`).toMatch(new RegExp(`-${task.name}-tasks$`));
      }
    }
  });

  it('runs the migrations before the topics in a cell, and the migrations alone before the control plane', () => {
    for (const cell of manifest.cells) {
      const plan = planOf(stack(synth, `cell-${cell.id}`).json);
      expect(plan.tasks.map((t) => [t.name, t.process])).toEqual([
        ['migrate', 'cell-migrate'],
        ['provision-topics', 'cell-provision-topics'],
      ]);
    }
    expect(planOf(stack(synth, 'control-plane').json).tasks.map((t) => [t.name, t.process])).toEqual([
      ['migrate', 'control-plane-migrate'],
    ]);
    // A standby's database is a read-only replica: it has no deploy task until it is promoted.
    for (const cell of manifest.cells.filter((c) => c.dr)) {
      expect(planOf(stack(synth, `cell-${cell.id}-dr`).json).tasks).toEqual([]);
    }
  });

  it('lists every ECS service with its own task definition; the plan, not the apply, gives it tasks', () => {
    for (const name of stacksWithServices()) {
      const { json } = stack(synth, name);
      const plan = planOf(json);
      const services = resources(json, 'aws_ecs_service');
      expect(plan.services.map((s) => s.name).sort(), name).toEqual(services.map((s) => String(s.body.name)).sort());
      for (const { body } of services) {
        const planned = plan.services.find((s) => s.name === body.name);
        expect(planned?.taskDefinition, `${name}/${body.name}`).toBe(body.task_definition);
        // On a fresh account nothing may start before the deploy tasks; later applies leave the revision and the
        // count to the deploy command, which moves them only after that revision's tasks succeeded.
        expect(body.desired_count, `${name}/${body.name}`).toBe(0);
        expect((body.lifecycle as Block).ignore_changes, `${name}/${body.name}`).toEqual(
          expect.arrayContaining(['desired_count', 'task_definition']),
        );
      }
      // Registering a scalable target raises its service to the minimum at once: it is registered at zero.
      for (const { body } of resources(json, 'aws_appautoscaling_target')) {
        expect(body.min_capacity, `${name}: ${String(body.resource_id)}`).toBe(0);
        expect((body.lifecycle as Block).ignore_changes).toEqual(['min_capacity']);
      }
    }
  });

  it('raises every primary service to at least two tasks and leaves the standby at zero', () => {
    for (const name of ['control-plane', ...manifest.cells.map((c) => `cell-${c.id}`)]) {
      const { json } = stack(synth, name);
      const scaled = new Set(
        resources(json, 'aws_appautoscaling_target').map((t) => {
          const [, service] = /\$\{aws_ecs_service\.([^.]+)\.name\}$/.exec(String(t.body.resource_id)) ?? [];
          return json.resource?.aws_ecs_service?.[service ?? '']?.name;
        }),
      );
      for (const service of planOf(json).services) {
        expect(service.min, `${name}/${service.name}`).toBeGreaterThanOrEqual(2);
        // The deploy registers the minimum on exactly the services that have a scalable target.
        expect(service.autoscaled, `${name}/${service.name}`).toBe(scaled.has(service.name));
      }
    }
    for (const cell of manifest.cells.filter((c) => c.dr)) {
      for (const service of planOf(stack(synth, `cell-${cell.id}-dr`).json).services) {
        expect([service.min, service.max, service.autoscaled], service.name).toEqual([0, 0, false]);
      }
    }
  });
});
