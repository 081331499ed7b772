import type { Manifest } from './manifest';
import {
  allContainerDefinitions,
  type Block,
  regionOf,
  resources,
  type StackJson,
  type Synthesized,
  stackRegion,
} from './synthesized';

/**
 * What a first apply needs that the stacks do not create, read from the synthesized stacks (never from the
 * manifest alone, so a construct that adds a NAT gateway or a broker shows up here without a second list):
 * images in each region's registry, certificates, the secret values an operator sets, and the quotas the
 * resources count against, compared with AWS's defaults for a new account.
 */

export interface Quota {
  /** The quota's name in Service Quotas. */
  readonly name: string;
  readonly serviceCode: string;
  /** Where the code is stable and documented; otherwise the commands look it up by name. */
  readonly quotaCode?: string;
  readonly per: 'region' | 'availability zone';
  readonly defaultValue: number;
}

/** AWS's default quotas for a new account, each per region unless it says otherwise. */
export const DEFAULT_QUOTAS = {
  // https://docs.aws.amazon.com/vpc/latest/userguide/amazon-vpc-limits.html: "Elastic IP addresses per Region: 5".
  elasticIps: {
    name: 'EC2-VPC Elastic IPs',
    serviceCode: 'ec2',
    quotaCode: 'L-0263D0A3',
    per: 'region',
    defaultValue: 5,
  },
  // Same page: "NAT gateways per Availability Zone: 5".
  natGatewaysPerAz: {
    name: 'NAT gateways per Availability Zone',
    serviceCode: 'vpc',
    quotaCode: 'L-FE5A380F',
    per: 'availability zone',
    defaultValue: 5,
  },
  // Same page: "VPCs per Region: 5" and "Internet gateways per Region: 5" (one per VPC here).
  vpcs: { name: 'VPCs per Region', serviceCode: 'vpc', quotaCode: 'L-F678F1CE', per: 'region', defaultValue: 5 },
  internetGateways: {
    name: 'Internet gateways per Region',
    serviceCode: 'vpc',
    quotaCode: 'L-A4707A72',
    per: 'region',
    defaultValue: 5,
  },
  // The Service Quotas console's "AWS default quota value" for a new account is 6 vCPU; ECS raises it with
  // usage ("New AWS accounts might have initial lower quotas that can increase over time",
  // https://docs.aws.amazon.com/AmazonECS/latest/developerguide/service-quotas.html), so read the applied value.
  fargateVcpu: {
    name: 'Fargate On-Demand vCPU resource count',
    serviceCode: 'fargate',
    quotaCode: 'L-3032A538',
    per: 'region',
    defaultValue: 6,
  },
  // https://docs.aws.amazon.com/msk/latest/developerguide/limits.html: "Number of brokers per account: 90".
  mskBrokers: { name: 'Number of brokers per account', serviceCode: 'kafka', per: 'region', defaultValue: 90 },
  // https://docs.aws.amazon.com/AmazonRDS/latest/AuroraUserGuide/CHAP_Limits.html: Proxies 20, DB clusters 40,
  // DB instances 40 per region.
  rdsProxies: { name: 'Proxies', serviceCode: 'rds', per: 'region', defaultValue: 20 },
  rdsClusters: { name: 'DB clusters', serviceCode: 'rds', per: 'region', defaultValue: 40 },
  rdsInstances: { name: 'DB instances', serviceCode: 'rds', per: 'region', defaultValue: 40 },
} as const satisfies Record<string, Quota>;

export type QuotaKey = keyof typeof DEFAULT_QUOTAS;

export interface QuotaUse {
  readonly quota: QuotaKey;
  readonly region: string;
  /** For a per-AZ quota: the AZ by its position in the region's zone list (the stacks use the first three). */
  readonly zone?: number;
  readonly needed: number;
  /** Which stacks' resources make up `needed`. */
  readonly from: Readonly<Record<string, number>>;
  readonly exceedsDefault: boolean;
}

export interface ImageCheck {
  readonly region: string;
  readonly uri: string;
  readonly stacks: readonly string[];
}

export interface CertificateCheck {
  readonly region: string;
  readonly arn: string;
  /** Names a client reaches the load balancers by, which the certificate must cover. */
  readonly mustCover: readonly string[];
}

export interface SecretCheck {
  readonly stack: string;
  readonly region: string;
  readonly name: string;
  readonly replicaRegions: readonly string[];
}

export interface Preflight {
  readonly images: readonly ImageCheck[];
  readonly certificates: readonly CertificateCheck[];
  readonly secrets: readonly SecretCheck[];
  readonly quotas: readonly QuotaUse[];
}

export function preflight(manifest: Manifest, synth: Synthesized): Preflight {
  const stacks = [...synth.stacks.values()];
  return {
    images: imageChecks(stacks),
    certificates: certificateChecks(manifest, stacks),
    secrets: stacks.flatMap(({ name, json }) => operatorSecrets(name, json)),
    quotas: quotaUses(stacks),
  };
}

type NamedStack = { readonly name: string; readonly json: StackJson };

function imageChecks(stacks: readonly NamedStack[]): ImageCheck[] {
  const byImage = new Map<string, { region: string; uri: string; stacks: Set<string> }>();
  for (const { name, json } of stacks) {
    for (const { body } of resources(json, 'aws_ecs_task_definition')) {
      const region = regionOf(json, 'aws_ecs_task_definition', body);
      for (const container of allContainerDefinitions(body)) {
        const key = `${region} ${container.image}`;
        const entry = byImage.get(key) ?? { region, uri: container.image, stacks: new Set<string>() };
        entry.stacks.add(name);
        byImage.set(key, entry);
      }
    }
  }
  return [...byImage.values()]
    .map((e) => ({ region: e.region, uri: e.uri, stacks: [...e.stacks].sort() }))
    .sort((a, b) => a.region.localeCompare(b.region) || a.uri.localeCompare(b.uri));
}

function certificateChecks(manifest: Manifest, stacks: readonly NamedStack[]): CertificateCheck[] {
  const internal = `*.${manifest.controlPlane.internalDomain}`;
  const byRegion = new Map<string, string>();
  for (const { json } of stacks) {
    for (const { body } of resources(json, 'aws_lb_listener')) {
      if (typeof body.certificate_arn === 'string')
        byRegion.set(regionOf(json, 'aws_lb_listener', body), body.certificate_arn);
    }
  }
  const regional = [...byRegion.entries()]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([region, arn]) => ({ region, arn, mustCover: [internal, ...manifest.edge.domainNames] }));
  const edge = { region: 'us-east-1', arn: manifest.edge.certificateArn, mustCover: manifest.edge.domainNames };
  return [...regional, edge];
}

/** Secrets whose value no resource writes: an operator puts it (Stripe keys, signing keys, the internal token). */
function operatorSecrets(stack: string, json: StackJson): SecretCheck[] {
  const written = new Set(
    resources(json, 'aws_secretsmanager_secret_version').map(({ body }) => String(body.secret_id)),
  );
  return resources(json, 'aws_secretsmanager_secret')
    .filter(
      ({ name }) =>
        !written.has(`\${aws_secretsmanager_secret.${name}.id}`) &&
        !written.has(`\${aws_secretsmanager_secret.${name}.arn}`),
    )
    .map(({ body }) => ({
      stack,
      region: regionOf(json, 'aws_secretsmanager_secret', body),
      name: String(body.name),
      replicaRegions: ((body.replica as Block[] | undefined) ?? []).map((r) => String(r.region)),
    }));
}

/** `${aws_subnet.x.id}` → `x`. */
function referenced(value: unknown, type: string): string | undefined {
  const match = new RegExp(`^\\$\\{${type}\\.([^.}]+)\\.`).exec(String(value));
  return match?.[1];
}

/** A subnet's AZ as the stacks place it: `${element(data.aws_availability_zones.zones.names, N)}`. */
function zoneIndex(json: StackJson, subnetRef: unknown): number {
  const subnet = json.resource?.aws_subnet?.[referenced(subnetRef, 'aws_subnet') ?? ''];
  const match = /names, (\d+)\)\}$/.exec(String(subnet?.availability_zone));
  if (!match) throw new Error(`cannot tell the AZ of subnet ${String(subnetRef)}`);
  return Number(match[1]);
}

interface Tally {
  add(quota: QuotaKey, region: string, stack: string, amount: number, zone?: number): void;
  uses(): QuotaUse[];
}

function tally(): Tally {
  const counts = new Map<string, { quota: QuotaKey; region: string; zone?: number; from: Record<string, number> }>();
  return {
    add(quota, region, stack, amount, zone) {
      if (amount === 0) return;
      const key = `${quota} ${region} ${zone ?? ''}`;
      const entry = counts.get(key) ?? { quota, region, zone, from: {} };
      entry.from[stack] = (entry.from[stack] ?? 0) + amount;
      counts.set(key, entry);
    },
    uses() {
      return [...counts.values()]
        .map((e) => {
          const needed = Object.values(e.from).reduce((a, b) => a + b, 0);
          return { ...e, needed, exceedsDefault: needed > DEFAULT_QUOTAS[e.quota].defaultValue };
        })
        .sort(
          (a, b) => a.region.localeCompare(b.region) || a.quota.localeCompare(b.quota) || (a.zone ?? 0) - (b.zone ?? 0),
        );
    },
  };
}

function quotaUses(stacks: readonly NamedStack[]): QuotaUse[] {
  const t = tally();
  const count = (json: StackJson, stack: string, type: string, quota: QuotaKey, amount = (_: Block) => 1) => {
    for (const { body } of resources(json, type)) t.add(quota, regionOf(json, type, body), stack, amount(body));
  };
  for (const { name, json } of stacks) {
    count(json, name, 'aws_eip', 'elasticIps');
    count(json, name, 'aws_vpc', 'vpcs');
    count(json, name, 'aws_internet_gateway', 'internetGateways');
    count(json, name, 'aws_msk_cluster', 'mskBrokers', (b) => Number(b.number_of_broker_nodes));
    count(json, name, 'aws_db_proxy', 'rdsProxies');
    count(json, name, 'aws_rds_cluster', 'rdsClusters');
    count(json, name, 'aws_rds_cluster_instance', 'rdsInstances');
    for (const { body } of resources(json, 'aws_nat_gateway')) {
      t.add('natGatewaysPerAz', regionOf(json, 'aws_nat_gateway', body), name, 1, zoneIndex(json, body.subnet_id));
    }
  }
  for (const { name, region, vcpu } of fargateDemand(stacks)) t.add('fargateVcpu', region, name, vcpu);
  return t.uses();
}

export interface FargateDemand {
  readonly name: string;
  readonly region: string;
  /** vCPU at the demand's peak (see fargateDemand). */
  readonly vcpu: number;
}

/**
 * Fargate vCPU per stack at its peak: each service at its autoscaling maximum (or its fixed count), or, if
 * higher, its minimum doubled during a rolling deploy (deployment_maximum_percent), plus the one-off tasks
 * a deploy runs. A standby runs nothing until a failover; then it needs what its primary needs, which is
 * what is counted for it, in its own region.
 */
export function fargateDemand(stacks: readonly NamedStack[]): FargateDemand[] {
  const own = new Map(stacks.map(({ name, json }) => [name, stackVcpu(json)]));
  return stacks.map(({ name, json }) => {
    const region = stackRegion(json);
    const standbyOf = /^(cell-.+)-dr$/.exec(name)?.[1];
    const running = own.get(name) ?? 0;
    const vcpu = standbyOf && running === 0 ? (own.get(standbyOf) ?? 0) : running;
    return { name, region, vcpu };
  });
}

function stackVcpu(json: StackJson): number {
  const taskCpu = new Map(
    resources(json, 'aws_ecs_task_definition').map(({ name, body }) => [name, Number(body.cpu) / 1024]),
  );
  const maxByService = new Map<string, number>();
  for (const { body } of resources(json, 'aws_appautoscaling_target')) {
    const service = /aws_ecs_service\.([^.}]+)\.name/.exec(String(body.resource_id))?.[1];
    if (service) maxByService.set(service, Number(body.max_capacity));
  }
  const inServices = new Set<string>();
  let total = 0;
  for (const { name, body } of resources(json, 'aws_ecs_service')) {
    const task = referenced(body.task_definition, 'aws_ecs_task_definition') ?? '';
    inServices.add(task);
    const cpu = taskCpu.get(task) ?? 0;
    const desired = Number(body.desired_count);
    const deployPeak = (desired * Number(body.deployment_maximum_percent ?? 200)) / 100;
    total += cpu * Math.max(maxByService.get(name) ?? desired, deployPeak);
  }
  for (const [task, cpu] of taskCpu) if (!inServices.has(task)) total += cpu;
  return total;
}

export function quotaExceeded(result: Preflight): QuotaUse[] {
  return result.quotas.filter((q) => q.exceedsDefault);
}

// ---- the checklist as text ------------------------------------------------------------------------------

const quotaLookup = (q: Quota, region: string) =>
  q.quotaCode
    ? `aws service-quotas get-service-quota --region ${region} --service-code ${q.serviceCode} --quota-code ${q.quotaCode} --query Quota.Value`
    : `aws service-quotas list-service-quotas --region ${region} --service-code ${q.serviceCode} --query "Quotas[?QuotaName=='${q.name}'].[QuotaCode,Value]"`;

const quotaRaise = (q: Quota, region: string, value: number) =>
  `aws service-quotas request-service-quota-increase --region ${region} --service-code ${q.serviceCode} --quota-code ${
    q.quotaCode ??
    `"$(aws service-quotas list-service-quotas --region ${region} --service-code ${q.serviceCode} --query "Quotas[?QuotaName=='${q.name}'].QuotaCode" --output text)"`
  } --desired-value ${value}`;

const ECR_URI = /^(\d{12})\.dkr\.ecr\.([a-z0-9-]+)\.amazonaws\.com\/([^:@]+)(?::([\w.-]+)|@(sha256:[0-9a-f]{64}))$/;

export function formatPreflight(manifest: Manifest, result: Preflight): string {
  const out: string[] = [];
  const item = (text: string, ...commands: string[]) => {
    out.push(`[ ] ${text}`);
    for (const command of commands) out.push(`      $ ${command}`);
  };

  out.push("# Images: every task pulls from its own region's registry", '');
  const home = manifest.images.cell;
  const replicaRegions = new Set<string>();
  for (const image of result.images) {
    const ecr = ECR_URI.exec(image.uri);
    if (!ecr) {
      item(
        `${image.region}: ${image.uri} (public registry, pulled through the VPC's NAT gateway) for ${image.stacks.join(', ')}`,
      );
      continue;
    }
    const [, account, region, repository, tag, digest] = ecr;
    if (region !== home.region) replicaRegions.add(region ?? '');
    item(
      `${image.region}: ${image.uri} exists (${image.stacks.join(', ')})`,
      `aws ecr describe-images --region ${region} --registry-id ${account} --repository-name ${repository} --image-ids ${
        tag ? `imageTag=${tag}` : `imageDigest=${digest}`
      } --query 'imageDetails[0].imagePushedAt'`,
    );
  }
  if (replicaRegions.size > 0) {
    const destinations = [...replicaRegions]
      .sort()
      .map((region) => `{"region":"${region}","registryId":"${home.account}"}`)
      .join(',');
    out.push(
      '',
      `    ECR replicates from ${home.region} to the other regions once a rule exists (it replaces the registry's`,
      '    current rule, so merge any you have; an image pushed before the rule is not copied: push it again):',
      `      $ aws ecr put-replication-configuration --region ${home.region} --replication-configuration '{"rules":[{"destinations":[${destinations}]}]}'`,
    );
  }

  out.push('', '# Certificates (ACM, issued, in the region of the load balancer that presents them)', '');
  for (const cert of result.certificates) {
    item(
      `${cert.region}: ${cert.arn} is ISSUED and covers ${cert.mustCover.join(', ')}`,
      `aws acm describe-certificate --region ${cert.region} --certificate-arn ${cert.arn} --query 'Certificate.[Status,SubjectAlternativeNames]'`,
    );
  }

  out.push(
    '',
    '# Secret values an operator sets (after the stack that creates the secret, before its services start)',
    '',
  );
  for (const secret of result.secrets) {
    const replicas = secret.replicaRegions.length > 0 ? `; replicated to ${secret.replicaRegions.join(', ')}` : '';
    item(
      `${secret.stack}: ${secret.name} (${secret.region}${replicas})`,
      `aws secretsmanager put-secret-value --region ${secret.region} --secret-id ${secret.name} --secret-string file://<value file>`,
      `aws secretsmanager describe-secret --region ${secret.region} --secret-id ${secret.name} --query 'VersionIdsToStages'`,
    );
  }

  out.push('', '# Quotas: what the synthesized stacks need, against AWS defaults for a new account', '');
  const byRegion = new Map<string, QuotaUse[]>();
  for (const use of result.quotas) byRegion.set(use.region, [...(byRegion.get(use.region) ?? []), use]);
  for (const [region, uses] of byRegion) {
    out.push(`## ${region}`);
    for (const use of uses) {
      const quota: Quota = DEFAULT_QUOTAS[use.quota];
      const where = use.zone === undefined ? '' : ` (AZ #${use.zone + 1} of the region's list)`;
      const parts = Object.entries(use.from)
        .map(([stack, n]) => `${stack} ${n}`)
        .join(' + ');
      const verdict = use.exceedsDefault ? 'EXCEEDS the default: raise it' : 'within the default';
      item(
        `${quota.name}${where}: ${use.needed} needed (${parts}); default ${quota.defaultValue}, ${verdict}`,
        quotaLookup(quota, region),
        ...(use.exceedsDefault ? [quotaRaise(quota, region, use.needed)] : []),
      );
    }
    out.push('');
  }
  const exceeded = quotaExceeded(result);
  out.push(
    exceeded.length === 0
      ? 'Every quota fits the defaults of a new account.'
      : `Raise before the first apply (or check the account's applied values above): ${exceeded
          .map((q) => `${DEFAULT_QUOTAS[q.quota].name} in ${q.region} to ${q.needed}`)
          .join('; ')}.`,
  );
  return out.join('\n');
}
