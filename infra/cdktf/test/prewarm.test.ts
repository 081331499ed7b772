import { PROCESSES } from '@onsale/processes';
import { beforeAll, describe, expect, it } from 'vitest';
import { parseManifest } from '../src/manifest';
import { PREWARM_TAG, type PrewarmTarget } from '../src/prewarm';
import { defaultManifest } from './support/manifests';
import {
  type Block,
  containerDefinitions,
  dataSources,
  resources,
  type StackJson,
  type Synthesized,
  stack,
  synthPlatform,
} from './support/terraform';

/** Each scalable target of a stack by the resource id AWS sees (service/<cluster>/<service>), with its tags. */
function scalableTargets(json: StackJson) {
  const clusters = new Map(resources(json, 'aws_ecs_cluster').map((c) => [c.name, String(c.body.name)]));
  const services = new Map(resources(json, 'aws_ecs_service').map((s) => [s.name, String(s.body.name)]));
  return resources(json, 'aws_appautoscaling_target').map(({ name, body }) => {
    const [, cluster, service] =
      /^service\/\$\{aws_ecs_cluster\.([^.]+)\.name\}\/\$\{aws_ecs_service\.([^.]+)\.name\}$/.exec(
        String(body.resource_id),
      ) ?? [];
    if (!cluster || !service) throw new Error(`${name}: unexpected resource id ${String(body.resource_id)}`);
    return {
      resourceId: `service/${clusters.get(cluster)}/${services.get(service)}`,
      max: Number(body.max_capacity),
      tags: (body.tags as Record<string, string> | undefined) ?? {},
    };
  });
}

/** The control plane worker's task definition (the `waiting-room` role) and its task role's policy statements. */
function worker(json: StackJson) {
  const task = resources(json, 'aws_ecs_task_definition').find(({ body }) => body.family === 'onsale-cp-waiting-room');
  if (!task) throw new Error('no waiting-room task definition');
  const [container] = containerDefinitions(task.body);
  const statements = dataSources(json, 'aws_iam_policy_document')
    .filter(({ name }) => name.includes('service-waiting-room_task-role_policy'))
    .flatMap(({ body }) => (body.statement as Block[] | undefined) ?? []);
  return { env: new Map((container?.environment ?? []).map((e) => [e.name, e.value])), statements };
}

describe('pre-warm: the control plane schedules scaling on the scalable targets the stacks declare', () => {
  const manifest = parseManifest(defaultManifest());
  let synth: Synthesized;
  let cp: StackJson;
  beforeAll(() => {
    synth = synthPlatform(defaultManifest());
    cp = stack(synth, 'control-plane').json;
  });

  const prewarmTargets = () => {
    const raw = worker(cp).env.get('PREWARM_TARGETS');
    expect(raw, 'PREWARM_TARGETS on the worker').toBeTruthy();
    // Parsed as the worker parses it at start: the control plane's own schema.
    const { shape } = PROCESSES['control-plane-worker'].schema;
    if (!('PREWARM_TARGETS' in shape)) throw new Error("PREWARM_TARGETS is not in the worker's schema");
    const targets: PrewarmTarget[] | undefined = shape.PREWARM_TARGETS.parse(raw);
    return targets ?? [];
  };

  it("names every tagged target of every stack, in its stack's region, with its sizing, and no other", () => {
    const targets = prewarmTargets();
    const expected = [
      { stack: 'control-plane', cell: undefined, region: manifest.controlPlane.region },
      ...manifest.cells.map((c) => ({ stack: `cell-${c.id}`, cell: c.id, region: c.region })),
    ];
    for (const { stack: name, cell, region } of expected) {
      const declared = scalableTargets(stack(synth, name).json);
      const tagged = declared.filter((t) => t.tags[PREWARM_TAG] === 'true');
      const named = targets.filter((t) => t.cell === cell);
      expect(named.map((t) => t.resourceId).sort(), name).toEqual(tagged.map((t) => t.resourceId).sort());
      for (const t of named) {
        expect(t.region, t.resourceId).toBe(region);
        expect(t.max, t.resourceId).toBe(declared.find((d) => d.resourceId === t.resourceId)?.max);
      }
    }
    // The control plane's router and API (the waiting room's), each cell's API and its autoscaled workers.
    expect(targets.filter((t) => !t.cell).map((t) => [t.role, t.resourceId])).toEqual(
      expect.arrayContaining([
        ['router', 'service/onsale-cp/router'],
        ['waitingRoom', 'service/onsale-cp/api'],
      ]),
    );
    const c2 = manifest.cells.find((c) => c.id === 'c2')!;
    expect(targets.filter((t) => t.cell === 'c2')).toEqual(
      expect.arrayContaining([
        {
          role: 'cellApi',
          cell: 'c2',
          region: c2.region,
          resourceId: 'service/onsale-c2/api',
          min: c2.sizing.services.api.min,
          max: c2.sizing.services.api.max,
        },
        expect.objectContaining({ role: 'cellWorkers', resourceId: 'service/onsale-c2/payment' }),
      ]),
    );
    expect(targets.filter((t) => t.cell === 'c2').map((t) => t.resourceId)).not.toContain(
      'service/onsale-c2/reconciler',
    );
  });

  it("lets only the worker's task role put and delete scheduled actions, on tagged targets of the platform's regions", () => {
    const { statements } = worker(cp);
    const put = statements.find((s) => s.sid === 'PrewarmScheduledActions');
    expect(put).toMatchObject({
      actions: expect.arrayContaining([
        'application-autoscaling:PutScheduledAction',
        'application-autoscaling:DeleteScheduledAction',
      ]),
      condition: [{ test: 'StringEquals', variable: `aws:ResourceTag/${PREWARM_TAG}`, values: ['true'] }],
    });
    const regions = new Set([manifest.controlPlane.region, ...manifest.cells.map((c) => c.region)]);
    expect(put!.resources).toEqual(
      expect.arrayContaining(
        [...regions].map((r) =>
          expect.stringMatching(new RegExp(`^arn:.*:application-autoscaling:${r}:.*:scalable-target/\\*$`)),
        ),
      ),
    );
    expect(put!.resources).toHaveLength(regions.size);
    expect(statements.find((s) => s.sid === 'PrewarmListActions')).toMatchObject({
      actions: ['application-autoscaling:DescribeScheduledActions'],
    });
    // No other role of any stack touches Application Auto Scaling.
    for (const [name, { json }] of synth.stacks) {
      for (const { name: doc, body } of dataSources(json, 'aws_iam_policy_document')) {
        if (doc.includes('service-waiting-room_task-role_policy')) continue;
        const actions = ((body.statement as Block[] | undefined) ?? []).flatMap((s) => (s.actions as string[]) ?? []);
        expect(
          actions.filter((a) => a.startsWith('application-autoscaling:')),
          `${name}/${doc}`,
        ).toEqual([]);
      }
    }
  });
});
