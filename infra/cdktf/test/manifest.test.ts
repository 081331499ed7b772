import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Testing } from 'cdktf';
import { afterAll, describe, expect, it } from 'vitest';
import { ManifestError, type ManifestInput, parseManifest } from '../src/manifest';
import { buildPlatform } from '../src/platform';
import { defaultManifest } from './support/manifests';

type Cell = ManifestInput['cells'][number];

function withCells(edit: (cells: Cell[]) => Cell[]): ManifestInput {
  const input = defaultManifest();
  return { ...input, cells: edit(input.cells) };
}

const outdir = mkdtempSync(join(tmpdir(), 'onsale-manifest-'));
afterAll(() => rmSync(outdir, { recursive: true, force: true }));

/** Parses then builds on a fresh app; the app is returned so a test can see nothing was built. */
function attempt(input: ManifestInput) {
  const app = Testing.app({ outdir });
  let error: unknown;
  try {
    buildPlatform(app, parseManifest(input));
  } catch (e) {
    error = e;
  }
  return { app, error };
}

function expectRejected(input: ManifestInput, field: string, message: RegExp) {
  const { app, error } = attempt(input);
  expect(error).toBeInstanceOf(ManifestError);
  const problems = (error as ManifestError).problems;
  expect(
    problems.some((p) => p.startsWith(`${field}: `) && message.test(p)),
    problems.join('\n'),
  ).toBe(true);
  // Rejected before a single construct exists: nothing half-built can reach cdktf.out.
  expect(app.node.children).toHaveLength(0);
}

describe('the cells manifest', () => {
  it('accepts the checked-in default and fills in sizing defaults', () => {
    const manifest = parseManifest(defaultManifest());
    expect(manifest.cells.map((c) => c.id)).toEqual(['c1', 'c2']);
    expect(manifest.cells[0]?.sizing.services.api).toEqual({ min: 3, max: 30, cpu: 1024, memory: 2048 });
    expect(manifest.cells[1]?.sizing.services.payment.max).toBe(24);
    expect(manifest.images.cell.repositoryArn).toBe('arn:aws:ecr:eu-west-1:123456789012:repository/onsale/cell');
  });

  it('refuses a private ticket key, or a duplicate kid, naming the entry', () => {
    const input = defaultManifest();
    const [first, second] = input.ticketKeys;
    expectRejected(
      { ...input, ticketKeys: [{ ...first!, d: 'c2VjcmV0LXNpZ25pbmcta2V5LXRoYXQtbXVzdC1ub3QtbGVhaw' } as never] },
      'ticketKeys[0]',
      /unrecognized key.*"d"/i,
    );
    expectRejected(
      { ...input, ticketKeys: [first!, { ...second!, kid: first!.kid }] },
      'ticketKeys[1].kid',
      /duplicate kid/,
    );
    expectRejected({ ...input, ticketKeys: [] }, 'ticketKeys', /must list the ticket keys/);
  });

  it('rejects a duplicate cell id, naming the second entry', () => {
    const input = withCells((cells) => [...cells, { id: 'c1', region: 'eu-west-1', cidr: '10.50.0.0/16' }]);
    expectRejected(input, 'cells[2].id', /duplicate cell id "c1" \(also cells\[0\]\)/);
  });

  it('rejects an unknown region', () => {
    const input = withCells(([first, ...rest]) => [
      { ...(first as Cell), region: 'mars-north-1' as Cell['region'] },
      ...rest,
    ]);
    expectRejected(input, 'cells[0].region', /unknown AWS region "mars-north-1"/);
  });

  it('rejects zero tasks for a service', () => {
    const input = withCells(([first, ...rest]) => [
      { ...(first as Cell), sizing: { services: { api: { min: 0 } } } },
      ...rest,
    ]);
    expectRejected(input, 'cells[0].sizing.services.api.min', /at least 2/);
  });

  it('rejects overlapping networks, since peered VPCs cannot share addresses', () => {
    const input = withCells((cells) => [...cells, { id: 'c3', region: 'us-east-2', cidr: '10.10.128.0/17' }]);
    expectRejected(input, 'cells[2].cidr', /overlaps cells\[0\]\.cidr \(10\.10\.0\.0\/16\)/);
  });

  it('rejects a cell in a region without a load balancer certificate', () => {
    const input = withCells((cells) => [...cells, { id: 'c3', region: 'ap-south-1', cidr: '10.60.0.0/16' }]);
    expectRejected(input, 'certificates.ap-south-1', /missing: cells\[2\]\.region/);
  });

  it('rejects a DR region equal to the cell region, and an edge certificate outside us-east-1', () => {
    const sameRegion = withCells(([first, ...rest]) => [
      { ...(first as Cell), dr: { region: 'eu-west-1', cidr: '10.110.0.0/16' } },
      ...rest,
    ]);
    expectRejected(sameRegion, 'cells[0].dr.region', /must differ/);
    const input = defaultManifest();
    input.edge.certificateArn = input.certificates['eu-west-1'] ?? '';
    expectRejected(input, 'edge.certificateArn', /us-east-1/);
  });

  it('rejects Fargate sizes that do not exist', () => {
    const input = withCells(([first, ...rest]) => [
      { ...(first as Cell), sizing: { services: { saga: { cpu: 512, memory: 512 } } } },
      ...rest,
    ]);
    expectRejected(input, 'cells[0].sizing.services.saga.memory', /512 MiB is not valid with 512 CPU units/);
  });
});
