import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TerraformStack, Testing } from 'cdktf';
import { METRICS_SIDECAR_NAME } from '../../src/constructs/metrics-sidecar';
import { type ManifestInput, parseManifest } from '../../src/manifest';
import {
  allContainerDefinitions,
  type Block,
  type ContainerDefinition,
  dataSources,
  type StackJson,
  type Synthesized,
  type SynthesizedStack,
  synthesize,
} from '../../src/synthesized';

export {
  allContainerDefinitions,
  type Block,
  type ContainerDefinition,
  dataSources,
  resources,
  type StackJson,
  type Synthesized,
  type SynthesizedStack,
} from '../../src/synthesized';

/** The manifest validated, then every stack synthesized and read back (src/synthesized.ts). */
export function synthPlatform(input: ManifestInput): Synthesized {
  return synthesize(parseManifest(input));
}

/**
 * Testing.synthScope, less the directory it leaves behind: its app makes an output directory under the system's
 * temporary directory on every call (empty, since nothing is written), which this removes.
 */
export function synthScope(fn: (scope: TerraformStack) => void): string {
  const outdir = mkdtempSync(join(tmpdir(), 'onsale-scope-'));
  try {
    const scope = new TerraformStack(Testing.app({ outdir }), 'stack');
    fn(scope);
    return Testing.synth(scope);
  } finally {
    rmSync(outdir, { recursive: true, force: true });
  }
}

export function stack(synth: Synthesized, name: string): SynthesizedStack {
  const found = synth.stacks.get(name);
  if (!found) throw new Error(`no stack ${name}; have ${[...synth.stacks.keys()].join(', ')}`);
  return found;
}

export function resourceCount(json: StackJson): number {
  return Object.values(json.resource ?? {}).reduce((sum, byName) => sum + Object.keys(byName).length, 0);
}

/** The interpolation Terraform uses for an attribute of a resource, e.g. ${aws_security_group.x.id}. */
export function refTo(type: string, name: string, attribute: string): string {
  return `\${${type}.${name}.${attribute}}`;
}

export interface PolicyStatement {
  readonly where: string;
  readonly effect: string;
  readonly actions: string[];
  readonly resources: string[];
}

/** Every statement of every aws_iam_policy_document in a stack (all policies here are built with it). */
export function policyStatements(json: StackJson): PolicyStatement[] {
  return dataSources(json, 'aws_iam_policy_document').flatMap(({ name, body }) =>
    ((body.statement as Block[] | undefined) ?? []).map((s) => ({
      where: `${name}/${String(s.sid ?? '')}`,
      effect: String(s.effect ?? 'Allow'),
      actions: (s.actions as string[] | undefined) ?? [],
      resources: (s.resources as string[] | undefined) ?? [],
    })),
  );
}

/**
 * A task definition's application containers: every container but the metrics collector beside the process
 * (`allContainerDefinitions` includes it).
 */
export function containerDefinitions(taskDefinition: Block): ContainerDefinition[] {
  return allContainerDefinitions(taskDefinition).filter((c) => c.name !== METRICS_SIDECAR_NAME);
}
