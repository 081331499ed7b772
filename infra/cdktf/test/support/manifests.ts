import { readFileSync } from 'node:fs';
import type { ManifestInput } from '../../src/manifest';

/** The checked-in default: two cells, one with a DR standby. */
export function defaultManifest(): ManifestInput {
  return JSON.parse(readFileSync(new URL('../../cells.json', import.meta.url), 'utf8'));
}

const REGIONS = ['eu-west-1', 'us-east-2', 'ap-southeast-2'] as const;
const DR_REGION = {
  'eu-west-1': 'eu-central-1',
  'us-east-2': 'us-west-2',
  'ap-southeast-2': 'ap-southeast-1',
} as const;

function certificate(region: string, n: number): string {
  return `arn:aws:acm:${region}:123456789012:certificate/00000000-0000-4000-8000-${String(n).padStart(12, '0')}`;
}

/** Ten cells over three regions, every third with a DR standby, partitions varying per cell. */
export function tenCellManifest(): ManifestInput {
  const base = defaultManifest();
  const regions = [...REGIONS, ...Object.values(DR_REGION), base.controlPlane.region];
  const certificates = Object.fromEntries(regions.map((region, i) => [region, certificate(region, i)]));
  const cells = Array.from({ length: 10 }, (_, i) => {
    const region = REGIONS[i % REGIONS.length] ?? 'eu-west-1';
    const partitions = 12 + 6 * i;
    return {
      id: `c${i + 1}`,
      region,
      cidr: `10.${20 + i}.0.0/16`,
      sizing: {
        kafka: { partitions },
        services: { saga: { max: partitions }, payment: { max: Math.min(24, partitions) }, ticket: { max: 12 } },
      },
      ...(i % 3 === 0 ? { dr: { region: DR_REGION[region], cidr: `10.${120 + i}.0.0/16` } } : {}),
    };
  });
  return { ...base, certificates, cells };
}
