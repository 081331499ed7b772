import { cellTopics } from '../../../contracts/src/topics';
import { beforeAll, describe, expect, it } from 'vitest';
import { consumerGroupId } from '../../../cell/src/messaging/consumers';
import { CELL_CONSUMERS } from '../../../cell/src/runtime/roles';
import { parseManifest } from '../src/manifest';
import { tenCellManifest } from './support/manifests';
import { type Block, policyStatements, resources, type Synthesized, stack, synthPlatform } from './support/terraform';

/** Does an IAM resource pattern (its last path segment may end in `*`) name this Kafka topic or group? */
function covers(resource: string, kind: 'topic' | 'group', cluster: string, name: string): boolean {
  const at = resource.indexOf(`:${kind}/${cluster}/`);
  if (at < 0) return false;
  const pattern = resource.slice(resource.lastIndexOf('/') + 1);
  return pattern.endsWith('*') ? name.startsWith(pattern.slice(0, -1)) : pattern === name;
}

describe('the wiring between a cell’s processes and its stack', () => {
  const manifest = parseManifest(tenCellManifest());
  let synth: Synthesized;
  beforeAll(() => {
    synth = synthPlatform(tenCellManifest());
  });

  it('lets the cell API read what its lag and dead-letter signals ask the broker for (kafkajs fetchOffsets, fetchTopicOffsets)', () => {
    for (const cell of manifest.cells) {
      const { json } = stack(synth, `cell-${cell.id}`);
      const cluster = `onsale-${cell.id}`;
      const api = policyStatements(json).filter((s) => s.effect === 'Allow' && s.where.includes('service-api_task-role'));
      const allows = (action: string, kind: 'topic' | 'group', name: string) =>
        api.some((s) => s.actions.includes(action) && s.resources.some((r) => covers(r, kind, cluster, name)));
      // The API's consumerLag reads every topic of the cell for every consumer group; refreshMetrics reads the DLQ.
      for (const topic of Object.values(cellTopics(cell.id))) {
        expect(allows('kafka-cluster:DescribeTopic', 'topic', topic), `${cell.id}: DescribeTopic ${topic}`).toBe(true);
      }
      for (const consumer of CELL_CONSUMERS) {
        const group = consumerGroupId(cell.id, consumer);
        expect(allows('kafka-cluster:DescribeGroup', 'group', group), `${cell.id}: DescribeGroup ${group}`).toBe(true);
      }
      expect(api.flatMap((s) => s.actions)).toContain('kafka-cluster:Connect');
      // Reading offsets is not reading messages: the API never consumes or publishes.
      for (const forbidden of ['kafka-cluster:ReadData', 'kafka-cluster:WriteData', 'kafka-cluster:AlterGroup']) {
        expect(api.flatMap((s) => s.actions), `${cell.id}: ${forbidden}`).not.toContain(forbidden);
      }
    }
  });

  it('watches, in every lag alarm and scaling policy, a consumer group some worker actually joins', () => {
    let watched = 0;
    for (const cell of manifest.cells) {
      const groups = new Set(CELL_CONSUMERS.map((c) => consumerGroupId(cell.id, c)));
      const { json } = stack(synth, `cell-${cell.id}`);
      const alarmGroups = resources(json, 'aws_cloudwatch_metric_alarm').flatMap(({ body }) => {
        const group = (body.dimensions as Record<string, string> | undefined)?.group;
        return group === undefined ? [] : [group];
      });
      const scalingGroups = resources(json, 'aws_appautoscaling_policy').flatMap(({ body }) => {
        const spec = (body.target_tracking_scaling_policy_configuration as Block | undefined)
          ?.customized_metric_specification as Block | undefined;
        const dimensions = (spec?.dimensions as { name: string; value: string }[] | undefined) ?? [];
        return dimensions.filter((d) => d.name === 'group').map((d) => d.value);
      });
      for (const group of [...alarmGroups, ...scalingGroups]) {
        watched++;
        expect(groups, `${cell.id}: ${group}`).toContain(group);
      }
      // Every consumer group is both alarmed on and scaled on.
      expect(new Set(alarmGroups), cell.id).toEqual(groups);
      expect(new Set(scalingGroups), cell.id).toEqual(groups);
    }
    expect(watched).toBe(manifest.cells.length * CELL_CONSUMERS.length * 2);
  });
});
