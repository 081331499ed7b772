import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { App } from 'cdktf';
import { METRICS_SIDECAR_NAME } from '../../src/constructs/metrics-sidecar';
import { type ManifestInput, parseManifest } from '../../src/manifest';
import { buildPlatform } from '../../src/platform';

export type Block = Record<string, unknown>;

/** A stack's cdk.tf.json, as Terraform reads it. */
export interface StackJson {
  readonly resource?: Record<string, Record<string, Block>>;
  readonly data?: Record<string, Record<string, Block>>;
  readonly provider?: Record<string, Block[]>;
  readonly terraform?: Block;
  readonly [key: string]: unknown;
}

export interface SynthesizedStack {
  readonly name: string;
  /** Where cdktf wrote it, relative to the output directory. */
  readonly path: string;
  /** The file exactly as written, for the cdktf Testing matchers. */
  readonly text: string;
  readonly json: StackJson;
}

export interface Synthesized {
  readonly stacks: Map<string, SynthesizedStack>;
}

/**
 * Synthesizes the whole app into a temporary directory, as `pnpm synth` does, and reads every stack back
 * from the manifest cdktf writes. Cross-stack references are only complete after a full synth.
 */
export function synthPlatform(input: ManifestInput): Synthesized {
  const manifest = parseManifest(input);
  const outdir = mkdtempSync(join(tmpdir(), 'onsale-cdktf-'));
  try {
    const app = new App({ outdir, stackTraces: false });
    buildPlatform(app, manifest);
    app.synth();

    const written = JSON.parse(readFileSync(join(outdir, 'manifest.json'), 'utf8')) as {
      stacks: Record<string, { synthesizedStackPath: string }>;
    };
    const stacks = new Map<string, SynthesizedStack>();
    for (const [name, entry] of Object.entries(written.stacks)) {
      const path = entry.synthesizedStackPath;
      const text = readFileSync(join(outdir, path), 'utf8');
      stacks.set(name, { name, path, text, json: JSON.parse(text) as StackJson });
    }
    return { stacks };
  } finally {
    rmSync(outdir, { recursive: true, force: true });
  }
}

export function stack(synth: Synthesized, name: string): SynthesizedStack {
  const found = synth.stacks.get(name);
  if (!found) throw new Error(`no stack ${name}; have ${[...synth.stacks.keys()].join(', ')}`);
  return found;
}

/** Every resource of a type, with the logical name Terraform addresses it by. */
export function resources(json: StackJson, type: string): { name: string; body: Block }[] {
  return Object.entries(json.resource?.[type] ?? {}).map(([name, body]) => ({ name, body }));
}

export function dataSources(json: StackJson, type: string): { name: string; body: Block }[] {
  return Object.entries(json.data?.[type] ?? {}).map(([name, body]) => ({ name, body }));
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

export interface ContainerDefinition {
  name: string;
  image: string;
  command: string[];
  environment: { name: string; value: string }[];
  secrets: { name: string; valueFrom: string }[];
}

/**
 * A task definition's application containers: every container but the metrics collector beside the process
 * (`allContainerDefinitions` includes it).
 */
export function containerDefinitions(taskDefinition: Block): ContainerDefinition[] {
  return allContainerDefinitions(taskDefinition).filter((c) => c.name !== METRICS_SIDECAR_NAME);
}

/**
 * A task definition's containers. Terraform evaluates `${...}` inside the JSON string before ECS reads it,
 * and an interpolation may hold quotes (`replace(x, ":a:", ":b:")`), so those become single quotes here.
 */
export function allContainerDefinitions(taskDefinition: Block): ContainerDefinition[] {
  const text = String(taskDefinition.container_definitions);
  let out = '';
  for (let i = 0; i < text.length; i++) {
    if (text.startsWith('${', i)) {
      let depth = 0;
      let j = i;
      for (; j < text.length; j++) {
        if (text[j] === '{') depth++;
        else if (text[j] === '}' && --depth === 0) break;
      }
      out += text.slice(i, j + 1).replaceAll('"', "'");
      i = j;
    } else {
      out += text[i];
    }
  }
  return JSON.parse(out) as ContainerDefinition[];
}
