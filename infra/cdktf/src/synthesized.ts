import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { App } from 'cdktf';
import type { Manifest } from './manifest';
import { buildPlatform } from './platform';

export type Block = Record<string, unknown>;

/** A stack's cdk.tf.json, as Terraform reads it. */
export interface StackJson {
  readonly resource?: Record<string, Record<string, Block>>;
  readonly data?: Record<string, Record<string, Block>>;
  readonly provider?: Record<string, Block[]>;
  readonly output?: Record<string, Block>;
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
export function synthesize(manifest: Manifest): Synthesized {
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

/** Every resource of a type, with the logical name Terraform addresses it by. */
export function resources(json: StackJson, type: string): { name: string; body: Block }[] {
  return Object.entries(json.resource?.[type] ?? {}).map(([name, body]) => ({ name, body }));
}

export function dataSources(json: StackJson, type: string): { name: string; body: Block }[] {
  return Object.entries(json.data?.[type] ?? {}).map(([name, body]) => ({ name, body }));
}

/** The provider configurations a stack declares, as Terraform names them: `aws`, `aws.primary`. */
export function providerConfigs(json: StackJson): Map<string, Block> {
  const configs = new Map<string, Block>();
  for (const [type, blocks] of Object.entries(json.provider ?? {})) {
    for (const block of blocks) configs.set(block.alias ? `${type}.${String(block.alias)}` : type, block);
  }
  return configs;
}

/** The provider configuration a resource or data source uses: its `provider`, else its type's default. */
export function providerOf(type: string, body: Block): string {
  return typeof body.provider === 'string' ? body.provider : type.slice(0, type.indexOf('_'));
}

/** The region of a stack's default AWS provider. */
export function stackRegion(json: StackJson): string {
  return regionOf(json, 'aws_', {});
}

/** The AWS region a resource lands in: its provider configuration's region. */
export function regionOf(json: StackJson, type: string, body: Block): string {
  const region = providerConfigs(json).get(providerOf(type, body))?.region;
  if (typeof region !== 'string') throw new Error(`no region for a ${type} (provider ${providerOf(type, body)})`);
  return region;
}

export interface ContainerDefinition {
  name: string;
  image: string;
  command: string[];
  environment: { name: string; value: string }[];
  secrets: { name: string; valueFrom: string }[];
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
