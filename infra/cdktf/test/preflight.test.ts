import { beforeAll, describe, expect, it } from 'vitest';
import { type Manifest, parseManifest } from '../src/manifest';
import { type DEFAULT_QUOTAS, formatPreflight, type Preflight, preflight, quotaExceeded } from '../src/preflight';
import { synthesize } from '../src/synthesized';
import { defaultManifest } from './support/manifests';

/** The checked-in manifest: the control plane and c1 in eu-west-1, c1's standby in eu-central-1, c2 in us-east-2. */
let manifest: Manifest;
let result: Preflight;

beforeAll(() => {
  manifest = parseManifest(defaultManifest());
  result = preflight(manifest, synthesize(manifest));
});

const use = (quota: keyof typeof DEFAULT_QUOTAS, region: string, zone?: number) =>
  result.quotas.find((q) => q.quota === quota && q.region === region && q.zone === zone);

describe('preflight of the two-cell manifest with DR', () => {
  it('fits NAT gateways and their Elastic IPs in every region within the defaults of a new account', () => {
    // The control plane's single NAT gateway beside c1's three: 4 of 5 in the shared region.
    expect(use('elasticIps', 'eu-west-1')).toMatchObject({ needed: 4, from: { 'control-plane': 1, 'cell-c1': 3 } });
    expect(use('natGatewaysPerAz', 'eu-west-1', 0)?.needed).toBe(2);
    expect(use('elasticIps', 'eu-central-1')?.needed).toBe(3);
    expect(use('elasticIps', 'us-east-2')?.needed).toBe(3);
    const network = result.quotas.filter((q) => q.quota === 'elasticIps' || q.quota === 'natGatewaysPerAz');
    expect(network.filter((q) => q.exceedsDefault)).toEqual([]);
  });

  it('counts brokers, proxies and Fargate vCPU from the synthesized resources, the standby at its primary size', () => {
    expect(use('mskBrokers', 'eu-west-1')?.from).toEqual({ 'control-plane': 3, 'cell-c1': 3 });
    expect(use('rdsProxies', 'eu-central-1')?.needed).toBe(1);
    const c1 = use('fargateVcpu', 'eu-west-1')?.from['cell-c1'];
    expect(c1).toBeGreaterThan(0);
    expect(use('fargateVcpu', 'eu-central-1')?.from['cell-c1-dr']).toBe(c1);
    // A new account's 6 vCPU cannot run a cell: preflight says which quota to raise, to what.
    expect(quotaExceeded(result).map((q) => `${q.quota} ${q.region}`)).toContain('fargateVcpu eu-west-1');
  });

  it("lists each region's image, certificate and every secret an operator fills, with the commands", () => {
    const text = formatPreflight(manifest, result);
    expect(text).toContain(
      'aws ecr describe-images --region eu-central-1 --registry-id 123456789012 --repository-name onsale/cell --image-ids imageTag=2026.11.0',
    );
    expect(text).toContain(
      '"destinations":[{"region":"eu-central-1","registryId":"123456789012"},{"region":"us-east-2"',
    );
    expect(result.certificates.map((c) => c.region).sort()).toEqual([
      'eu-central-1',
      'eu-west-1',
      'us-east-1',
      'us-east-2',
    ]);
    expect(result.secrets).toContainEqual({
      stack: 'cell-c1',
      region: 'eu-west-1',
      name: 'onsale/c1/payment/stripe-secret-key',
      replicaRegions: ['eu-central-1'],
    });
    // The master secret's value is written by the stack itself (write-only), so no operator step names it.
    expect(result.secrets.map((s) => s.name)).not.toContain('onsale/onsale-c1/master');
    expect(text).toContain(
      'aws secretsmanager put-secret-value --region eu-west-1 --secret-id onsale/c1/payment/stripe-secret-key',
    );
  });
});

describe('preflight of a manifest that outgrows a default quota', () => {
  it('names the quota to raise, the region and the value, with the request command', () => {
    const base = defaultManifest();
    const crowded = parseManifest({
      ...base,
      cells: base.cells.map((cell) =>
        cell.id === 'c2' ? { ...cell, region: 'eu-west-1', backupCopyRegion: 'eu-central-1' } : cell,
      ),
    });
    const crowdedResult = preflight(crowded, synthesize(crowded));
    const eips = crowdedResult.quotas.find((q) => q.quota === 'elasticIps' && q.region === 'eu-west-1');
    expect(eips).toMatchObject({ needed: 7, exceedsDefault: true });
    const text = formatPreflight(crowded, crowdedResult);
    expect(text).toContain('EC2-VPC Elastic IPs in eu-west-1 to 7');
    expect(text).toContain(
      'aws service-quotas request-service-quota-increase --region eu-west-1 --service-code ec2 --quota-code L-0263D0A3 --desired-value 7',
    );
  });
});
