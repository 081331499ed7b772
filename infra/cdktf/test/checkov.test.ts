import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defaultManifest } from './support/manifests';
import { type Block, type StackJson, type Synthesized, synthPlatform } from './support/terraform';

/** Installed by `scripts/platform install` (install_checkov), outside the repository. */
const CHECKOV = process.env.CHECKOV_BIN ?? join(homedir(), '.cache/onsale/checkov-venv/bin/checkov');
const SKIP = /^checkov:skip=([A-Z0-9_]+):(.+)$/;

/**
 * Suppressions for data sources, whose `//` property cdktf overwrites with its own metadata: the one
 * documented skip list, each with its reason.
 */
const DATA_SOURCE_SKIPS: readonly { check: string; address: RegExp; reason: string }[] = [
  {
    check: 'CKV_AWS_394',
    address: /^data\.(aws_availability_zones\.)?lookups(-[a-z0-9-]+)?_zones_[0-9A-F]+$/,
    reason:
      'AwsLookups.azs takes the first three zone names in order; a zone AWS adds later comes after them, and pinning names per region would break regions without an "a", "b" or "c" zone',
  },
];

interface Finding {
  check_id: string;
  check_name: string;
  file_path: string;
  resource: string;
}
interface CheckovReport {
  summary: { passed: number; failed: number; parsing_errors: number };
  results: { failed_checks?: Finding[] };
}

/**
 * The copy checkov scans. Its terraform_json parser (3.3.x) crashes on a plain-string
 * `terraform.required_version` ("this method receives only dicts"), so the copy carries the constraint as
 * an object; the synthesized stacks keep `>= 1.11` as Terraform reads it.
 */
function scannable(json: StackJson): StackJson {
  const terraform = json.terraform as Block | undefined;
  if (typeof terraform?.required_version !== 'string') return json;
  return { ...json, terraform: { ...terraform, required_version: { '//': terraform.required_version } } };
}

/**
 * The block a finding names. Checkov's resource checks give `resource.<name>` or `data.<name>` (cdktf's
 * logical names are unique in a stack), its graph checks `<type>.<name>` or `data.<type>.<name>`.
 */
function blockAt(json: StackJson, address: string): Block | undefined {
  const parts = address.split('.');
  const kind = parts[0] === 'data' ? 'data' : 'resource';
  const byType = (json[kind] as Record<string, Record<string, Block>> | undefined) ?? {};
  const rest = parts[0] === 'data' || parts[0] === 'resource' ? parts.slice(1) : parts;
  if (rest.length >= 2) return byType[rest[0] ?? '']?.[rest.slice(1).join('.')];
  return Object.values(byType).find((blocks) => rest[0] !== undefined && rest[0] in blocks)?.[rest[0] ?? ''];
}

/** The reasoned suppressions on one resource or data source: `//` entries written by `checkovSkip`. */
function suppressions(json: StackJson, address: string): Map<string, string> {
  const comments = (blockAt(json, address)?.['//'] as Block | undefined)?.checkov;
  const skips = new Map<string, string>();
  for (const comment of Array.isArray(comments) ? comments : []) {
    const match = SKIP.exec(String(comment));
    if (match?.[1] && match[2]?.trim()) skips.set(match[1], match[2].trim());
  }
  return skips;
}

describe('checkov on the synthesized Terraform JSON', () => {
  let synth: Synthesized;
  let dir: string;
  let report: CheckovReport;

  beforeAll(async () => {
    if (!existsSync(CHECKOV)) throw new Error(`checkov is not installed at ${CHECKOV}: run scripts/platform install`);
    synth = synthPlatform(defaultManifest());
    dir = mkdtempSync(join(tmpdir(), 'onsale-checkov-'));
    for (const { name, json } of synth.stacks.values()) {
      mkdirSync(join(dir, name));
      writeFileSync(join(dir, name, 'cdk.tf.json'), JSON.stringify(scannable(json), null, 1));
    }
    // Offline: no guideline download, no platform mapping (severities then show as none).
    const { stdout } = await promisify(execFile)(
      CHECKOV,
      [
        '--directory',
        dir,
        '--framework',
        'terraform_json',
        '--output',
        'json',
        '--quiet',
        '--compact',
        '--skip-download',
      ],
      { env: { ...process.env, BC_SKIP_MAPPING: 'TRUE', LOG_LEVEL: 'ERROR' }, maxBuffer: 64 * 1024 * 1024 },
    ).catch((err: { stdout?: string; code?: number }) => {
      // checkov exits 1 when a check fails; the findings are still on stdout.
      if (err.code === 1 && err.stdout) return { stdout: err.stdout };
      throw err;
    });
    const parsed = JSON.parse(stdout) as CheckovReport | CheckovReport[];
    report = Array.isArray(parsed) ? (parsed[0] as CheckovReport) : parsed;
  }, 240_000);

  afterAll(() => {
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('parses every stack', () => {
    expect(report.summary.parsing_errors).toBe(0);
    expect(report.summary.passed).toBeGreaterThan(1000);
  });

  it('leaves no finding without a reasoned suppression on its resource', () => {
    const unsuppressed = (report.results.failed_checks ?? [])
      .filter((f) => {
        const stackName = f.file_path.split('/').filter(Boolean)[0] ?? '';
        const json = synth.stacks.get(stackName)?.json;
        if (DATA_SOURCE_SKIPS.some((s) => s.check === f.check_id && s.address.test(f.resource))) return false;
        return !json || !suppressions(json, f.resource).has(f.check_id);
      })
      .map((f) => `${f.file_path} ${f.resource}: ${f.check_id} ${f.check_name}`);
    expect(unsuppressed).toEqual([]);
  });
});
