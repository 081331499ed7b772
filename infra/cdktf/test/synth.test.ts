import { beforeAll, describe, expect, it } from 'vitest';
import { type Manifest, parseManifest } from '../src/manifest';
import { CELL_ROLE_NAMES } from '../src/roles';
import { defaultManifest, tenCellManifest } from './support/manifests';
import {
  dataSources,
  resourceCount,
  resources,
  type StackJson,
  type Synthesized,
  synthPlatform,
} from './support/terraform';

function expectedStacks(manifest: Manifest): string[] {
  return [
    'control-plane',
    'edge',
    ...manifest.cells.map((c) => `cell-${c.id}`),
    ...manifest.cells.filter((c) => c.dr).map((c) => `cell-${c.id}-dr`),
  ].sort();
}

/** Resource types and how many of each: two cells built by the same construct have the same histogram. */
function histogram(json: StackJson): Record<string, number> {
  return Object.fromEntries(
    Object.entries(json.resource ?? {}).map(([type, byName]) => [type, Object.keys(byName).length]),
  );
}

describe.each([
  ['the default two-cell manifest', defaultManifest],
  ['a ten-cell manifest', tenCellManifest],
])('synthesizing %s', (_label, input) => {
  const manifest = parseManifest(input());
  let synth: Synthesized;
  beforeAll(() => {
    synth = synthPlatform(input());
  });

  it('writes one stack per concern and per cell, each a Terraform JSON file on disk', () => {
    expect([...synth.stacks.keys()].sort()).toEqual(expectedStacks(manifest));
    for (const { name, path, json } of synth.stacks.values()) {
      expect(path).toBe(`stacks/${name}/cdk.tf.json`);
      expect(json.terraform).toMatchObject({ backend: { local: { path: `../../../state/${name}.tfstate` } } });
    }
  });

  it('gives every cell and every standby one Fargate service per process role', () => {
    for (const cell of manifest.cells) {
      const names = [`cell-${cell.id}`, ...(cell.dr ? [`cell-${cell.id}-dr`] : [])];
      for (const name of names) {
        const json = synth.stacks.get(name)?.json ?? {};
        const services = resources(json, 'aws_ecs_service').map((s) => s.body.name);
        expect(services.sort(), name).toEqual([...CELL_ROLE_NAMES].sort());
      }
    }
  });

  it('builds every cell from the same construct: same resources, differing only by DR membership', () => {
    const primaries = manifest.cells.map((cell) => ({ cell, json: synth.stacks.get(`cell-${cell.id}`)?.json ?? {} }));
    const plain = primaries.filter((p) => !p.cell.dr).map((p) => histogram(p.json));
    const withDr = primaries.filter((p) => p.cell.dr).map((p) => histogram(p.json));
    for (const group of [plain, withDr]) {
      for (const h of group) expect(h).toEqual(group[0]);
    }
    for (const { json } of primaries) expect(resourceCount(json)).toBeGreaterThan(150);
  });

  it('lets each DR stack read its primary cell and the control plane through remote state', () => {
    for (const cell of manifest.cells.filter((c) => c.dr)) {
      const json = synth.stacks.get(`cell-${cell.id}-dr`)?.json ?? {};
      const paths = dataSources(json, 'terraform_remote_state').map((d) => (d.body.config as { path: string }).path);
      expect(paths.sort()).toEqual([`../../../state/cell-${cell.id}.tfstate`, '../../../state/control-plane.tfstate']);
    }
  });
});
