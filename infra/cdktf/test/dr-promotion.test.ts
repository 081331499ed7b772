import { describe, expect, it } from 'vitest';
import type { ManifestInput } from '../src/manifest';
import { defaultManifest } from './support/manifests';
import { containerDefinitions, resources, stack, synthPlatform } from './support/terraform';

/** Cell c1 in a region of its own (not the control plane's), with its DR standby in eu-central-1. */
function manifestWithC1In(region: 'eu-west-2', dr: { promoted?: { epoch: number } }): ManifestInput {
  const base = defaultManifest();
  const [c1, ...rest] = base.cells;
  if (!c1?.dr) throw new Error('the default manifest gives c1 a DR standby');
  return {
    ...base,
    certificates: {
      ...base.certificates,
      [region]: 'arn:aws:acm:eu-west-2:123456789012:certificate/7b9d1f3a-5c2e-4a8b-9d0f-1e3a5c7b9d20',
    },
    cells: [{ ...c1, region, dr: { ...c1.dr, ...dr } }, ...rest],
  };
}

describe('promoting the DR standby of c1 by manifest', () => {
  it('synthesizes a DR stack that refers to nothing in the primary region or its stack', () => {
    const synth = synthPlatform(manifestWithC1In('eu-west-2', { promoted: { epoch: 2 } }));
    const { text, json } = stack(synth, 'cell-c1-dr');
    expect(text).not.toContain('eu-west-2');
    expect(text).not.toMatch(/cross-stack-reference-input-cell-c1\b(?!-dr)/);
    expect(json.provider?.aws?.map((p) => p.region)).not.toContain('eu-west-2');
    expect(resources(json, 'aws_msk_replicator')).toEqual([]);
    expect(resources(json, 'aws_msk_cluster_policy')).toEqual([]);
    // The cell at size under the new epoch, scaling as a primary does.
    const plan = (json.output as { deploy: { value: { services: { min: number }[] } } }).deploy.value;
    for (const service of plan.services) expect(service.min).toBeGreaterThan(0);
    expect(resources(json, 'aws_appautoscaling_target').length).toBeGreaterThan(0);
    for (const task of resources(json, 'aws_ecs_task_definition')) {
      for (const container of containerDefinitions(task.body)) {
        // Broker-only tasks write no ledger, so carry no epoch.
        if (container.command.some((part) => /provision-topics|replay-dead-letters/.test(part))) continue;
        expect(container.environment, String(task.body.family)).toContainEqual({ name: 'CELL_EPOCH', value: '2' });
      }
    }
  });

  it('keeps the unpromoted standby at zero tasks, fed from the primary region', () => {
    const synth = synthPlatform(manifestWithC1In('eu-west-2', {}));
    const { text, json } = stack(synth, 'cell-c1-dr');
    expect(text).toContain('eu-west-2');
    expect(resources(json, 'aws_msk_replicator')).toHaveLength(1);
    for (const service of resources(json, 'aws_ecs_service')) expect(service.body.desired_count).toBe(0);
  });

  it('refuses a promotion that does not raise the epoch', () => {
    expect(() => synthPlatform(manifestWithC1In('eu-west-2', { promoted: { epoch: 1 } }))).toThrow(
      /cells\[0\]\.dr\.promoted\.epoch: must be above the primary's epoch \(1\)/,
    );
  });
});

describe('removing a cell from the manifest', () => {
  it("leaves every other cell's synthesized stacks byte-for-byte unchanged", () => {
    const base = defaultManifest();
    const before = synthPlatform(base);
    const after = synthPlatform({ ...base, cells: base.cells.filter((cell) => cell.id !== 'c1') });
    expect([...after.stacks.keys()].sort()).toEqual(['cell-c2', 'control-plane', 'edge']);
    expect(stack(after, 'cell-c2').text).toBe(stack(before, 'cell-c2').text);
  });
});
