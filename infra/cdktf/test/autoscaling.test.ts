import { consumerGroupId } from '@onsale/cell/messaging/consumers';
import { beforeAll, describe, expect, it } from 'vitest';
import { ManifestError, parseManifest } from '../src/manifest';
import { CELL_ROLE_NAMES, CELL_ROLES, type CellRole, type ProcessRole } from '../src/roles';
import { tenCellManifest } from './support/manifests';
import { type Block, resources, type StackJson, type Synthesized, stack, synthPlatform } from './support/terraform';

const CONSUMERS = CELL_ROLE_NAMES.filter((role) => CELL_ROLES[role].scaling.kind === 'consumer-lag');

interface Scaling {
  readonly service: string;
  readonly min: number;
  readonly max: number;
  readonly policy: Block;
}

/** Each autoscaling policy joined to its scalable target and to the ECS service the target scales. */
function scalingOf(json: StackJson): Scaling[] {
  const targets = new Map(resources(json, 'aws_appautoscaling_target').map((t) => [t.name, t.body]));
  const services = new Map(resources(json, 'aws_ecs_service').map((s) => [s.name, String(s.body.name)]));
  return resources(json, 'aws_appautoscaling_policy').map(({ name, body }) => {
    const [, targetName] =
      /^\$\{aws_appautoscaling_target\.([^.]+)\.resource_id\}$/.exec(String(body.resource_id)) ?? [];
    const target = targetName ? targets.get(targetName) : undefined;
    if (!target) throw new Error(`${name} scales no known target`);
    const [, serviceName] = /\$\{aws_ecs_service\.([^.]+)\.name\}$/.exec(String(target.resource_id)) ?? [];
    const service = serviceName ? services.get(serviceName) : undefined;
    if (!service) throw new Error(`${targetName} scales no known service`);
    return { service, min: Number(target.min_capacity), max: Number(target.max_capacity), policy: body };
  });
}

function trackingConfig(policy: Block): Block {
  return policy.target_tracking_scaling_policy_configuration as Block;
}

describe('autoscaling', () => {
  const manifest = parseManifest(tenCellManifest());
  let synth: Synthesized;
  beforeAll(() => {
    synth = synthPlatform(tenCellManifest());
  });

  it("scales every consumer on its group's lag, never beyond its cell's partition count", () => {
    for (const cell of manifest.cells) {
      const partitions = cell.sizing.kafka.partitions;
      const consumers = scalingOf(stack(synth, `cell-${cell.id}`).json).filter((s) =>
        (CONSUMERS as string[]).includes(s.service),
      );
      expect(consumers.map((c) => c.service).sort(), cell.id).toEqual([...CONSUMERS].sort());
      for (const consumer of consumers) {
        expect(consumer.max, `${cell.id}/${consumer.service}`).toBeLessThanOrEqual(partitions);
        expect(trackingConfig(consumer.policy).customized_metric_specification).toMatchObject({
          namespace: 'Onsale/Cell',
          metric_name: 'onsale_consumer_lag',
          dimensions: [
            { name: 'cell', value: cell.id },
            {
              name: 'group',
              value: consumerGroupId(
                cell.id,
                (CELL_ROLES[consumer.service as CellRole] as ProcessRole).kafka?.consumer ?? '',
              ),
            },
          ],
        });
      }
    }
  });

  it('scales the API on requests per target of its own load balancer', () => {
    for (const cell of manifest.cells) {
      const api = scalingOf(stack(synth, `cell-${cell.id}`).json).find((s) => s.service === 'api');
      expect(trackingConfig(api?.policy ?? {}).predefined_metric_specification, cell.id).toMatchObject({
        predefined_metric_type: 'ALBRequestCountPerTarget',
        resource_label: expect.stringMatching(/aws_lb\..*arn_suffix.*aws_lb_target_group\..*arn_suffix/),
      });
    }
  });

  it('keeps at least two tasks of every cell service running, and starts standbys at zero', () => {
    for (const cell of manifest.cells) {
      const { json } = stack(synth, `cell-${cell.id}`);
      // The deploy command raises each service to this minimum after the deploy tasks (test/deploy-plan.test.ts).
      const plan = (json.output as { deploy: { value: { services: { name: string; min: number }[] } } }).deploy.value;
      for (const service of plan.services) {
        expect(service.min, `${cell.id}/${service.name}`).toBeGreaterThanOrEqual(2);
      }
      for (const scaling of scalingOf(json)) {
        expect(plan.services.find((s) => s.name === scaling.service)?.min).toBeGreaterThanOrEqual(2);
      }
      if (!cell.dr) continue;
      const standby = stack(synth, `cell-${cell.id}-dr`).json;
      for (const service of resources(standby, 'aws_ecs_service')) expect(service.body.desired_count).toBe(0);
      // Nothing may scale a standby up on replicated lag while the primary is still serving.
      expect(resources(standby, 'aws_appautoscaling_target')).toEqual([]);
    }
  });

  it('refuses a manifest whose consumer could outnumber the partitions', () => {
    const input = tenCellManifest();
    const [first] = input.cells;
    if (!first) throw new Error('ten-cell manifest has no cells');
    first.sizing = { kafka: { partitions: 6 }, services: { saga: { max: 7 } } };
    expect(() => parseManifest(input)).toThrow(ManifestError);
    expect(() => parseManifest(input)).toThrow(/cells\[0\]\.sizing\.services\.saga\.max: 7 exceeds the 6 partitions/);
  });
});
