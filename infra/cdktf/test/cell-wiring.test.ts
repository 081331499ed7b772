import { consumerGroupId } from '@onsale/cell/messaging/consumers';
import { CELL_CONSUMERS } from '@onsale/cell/runtime/roles';
import { cellTopics } from '@onsale/contracts/topics';
import { beforeAll, describe, expect, it } from 'vitest';
import { cellApiUrl, controlPlaneApiUrl, parseManifest } from '../src/manifest';
import { tenCellManifest } from './support/manifests';
import {
  type Block,
  containerDefinitions,
  policyStatements,
  resources,
  type StackJson,
  type Synthesized,
  stack,
  synthPlatform,
} from './support/terraform';

/** Does an IAM resource pattern (its last path segment may end in `*`) name this Kafka topic or group? */
function covers(resource: string, kind: 'topic' | 'group', cluster: string, name: string): boolean {
  const at = resource.indexOf(`:${kind}/${cluster}/`);
  if (at < 0) return false;
  const pattern = resource.slice(resource.lastIndexOf('/') + 1);
  return pattern.endsWith('*') ? name.startsWith(pattern.slice(0, -1)) : pattern === name;
}

/** Each container's environment in a stack, by the process its task runs (its log stream prefix is the role). */
function environments(json: StackJson): Record<string, string>[] {
  return resources(json, 'aws_ecs_task_definition').flatMap(({ body }) =>
    containerDefinitions(body).map((c) => Object.fromEntries(c.environment.map((e) => [e.name, e.value]))),
  );
}

/** The one resource of a type whose body matches, or a failure naming what was looked for. */
function only(json: StackJson, type: string, match: (body: Block) => boolean, what: string): Block {
  const found = resources(json, type).filter(({ body }) => match(body));
  expect(found, what).toHaveLength(1);
  return found[0]!.body;
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
      const api = policyStatements(json).filter(
        (s) => s.effect === 'Allow' && s.where.includes('service-api_task-role'),
      );
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
        expect(
          api.flatMap((s) => s.actions),
          `${cell.id}: ${forbidden}`,
        ).not.toContain(forbidden);
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

  it('creates the names the processes use: a private zone on every VPC, the control plane API and each cell API in it', () => {
    const domain = manifest.controlPlane.internalDomain;
    const cp = stack(synth, 'control-plane').json;
    const zone = resources(cp, 'aws_route53_zone');
    expect(zone.map((z) => z.body.name)).toEqual([domain]);
    const zoneName = zone[0]!.name;
    expect(zone[0]!.body.vpc).toEqual([{ vpc_id: expect.stringMatching(/^\$\{aws_vpc\./), vpc_region: 'eu-west-1' }]);
    const cpHost = new URL(controlPlaneApiUrl(manifest)).host;
    const cpRecord = only(cp, 'aws_route53_record', (b) => b.name === cpHost, `record ${cpHost}`);
    expect(cpRecord.zone_id).toBe(`\${aws_route53_zone.${zoneName}.zone_id}`);
    const [cpApiAlb] = resources(cp, 'aws_lb').filter((lb) => lb.body.name === 'onsale-cp-api');
    expect(cpRecord.alias).toMatchObject({ name: `\${aws_lb.${cpApiAlb!.name}.dns_name}` });
    // The router calls the control plane by that name.
    const router = environments(cp).filter((e) => e.CONTROL_PLANE_URL !== undefined);
    expect(router.length).toBeGreaterThan(0);
    for (const env of router) expect(new URL(env.CONTROL_PLANE_URL!).host).toBe(cpHost);

    for (const cell of manifest.cells) {
      for (const standby of cell.dr ? [false, true] : [false]) {
        const name = standby ? `cell-${cell.id}-dr` : `cell-${cell.id}`;
        const { json } = stack(synth, name);
        const host = new URL(cellApiUrl(manifest, cell.id, standby)).host;
        const record = only(json, 'aws_route53_record', (b) => b.name === host, `${name}: record ${host}`);
        const [vpc] = resources(json, 'aws_vpc');
        const association = only(json, 'aws_route53_zone_association', () => true, `${name}: zone association`);
        expect(association.vpc_id, name).toBe(`\${aws_vpc.${vpc!.name}.id}`);
        expect(association.vpc_region, name).toBe(standby ? cell.dr!.region : cell.region);
        // Both point at the control plane's zone (a cross-stack reference), as the record does.
        expect(String(association.zone_id), name).toMatch(/outputs\.cross-stack-output-aws_route53_zoneprivate-zone/);
        expect(record.zone_id, name).toBe(association.zone_id);
        const [alb] = resources(json, 'aws_lb').filter((lb) => String(lb.body.name).endsWith('-api'));
        expect(record.alias, name).toMatchObject({ name: `\${aws_lb.${alb!.name}.dns_name}` });
        // The registry's baseUrl for the cell is published beside it, and the cell fetches the JWKS by name.
        expect((json.output as Record<string, Block>).api_url?.value, name).toBe(`https://${host}`);
        for (const env of environments(json).filter((e) => e.ADMISSION_JWKS_URL !== undefined)) {
          expect(new URL(env.ADMISSION_JWKS_URL!).host, name).toBe(cpHost);
        }
      }
    }
  });

  it('publishes no SSM directory that no process reads', () => {
    for (const { name, json } of synth.stacks.values()) {
      expect(resources(json, 'aws_ssm_parameter'), name).toEqual([]);
    }
  });
});
