import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { overlaps, parseCidr } from './cidr';
import { InternalName } from './naming';
import { CELL_ROLE_NAMES, CELL_ROLES, CONTROL_PLANE_ROLES, type ProcessRole, type ServiceSizing } from './roles';

/** Commercial regions that offer every service a cell needs (Aurora PostgreSQL, MSK, RDS Proxy, ElastiCache). */
export const AWS_REGIONS = [
  'us-east-1',
  'us-east-2',
  'us-west-1',
  'us-west-2',
  'ca-central-1',
  'sa-east-1',
  'eu-west-1',
  'eu-west-2',
  'eu-west-3',
  'eu-central-1',
  'eu-central-2',
  'eu-north-1',
  'eu-south-1',
  'eu-south-2',
  'ap-northeast-1',
  'ap-northeast-2',
  'ap-northeast-3',
  'ap-southeast-1',
  'ap-southeast-2',
  'ap-southeast-3',
  'ap-southeast-4',
  'ap-south-1',
  'ap-south-2',
  'ap-east-1',
  'me-central-1',
  'me-south-1',
  'af-south-1',
  'il-central-1',
] as const;

export type AwsRegion = (typeof AWS_REGIONS)[number];

/** CloudFront only accepts certificates, and WAF only accepts web ACLs, from this region. */
export const EDGE_REGION = 'us-east-1' satisfies AwsRegion;

const Region = z.enum(AWS_REGIONS, {
  error: (issue) => `unknown AWS region ${JSON.stringify(issue.input)}`,
});

const Cidr = z.string().refine(
  (value) => {
    const range = parseCidr(value);
    return range !== undefined && range.prefix >= 16 && range.prefix <= 20;
  },
  { error: 'must be an IPv4 network between /16 and /20, e.g. 10.20.0.0/16' },
);

// Cell ids end up in resource names with tight limits (load balancers and target groups: 32 characters).
const CellId = z
  .string()
  .regex(/^[a-z](?:[a-z0-9-]{0,14}[a-z0-9])?$/, 'lowercase letters, digits and inner dashes, at most 16');

const ECR_IMAGE =
  /^(\d{12})\.dkr\.ecr\.([a-z0-9-]+)\.amazonaws\.com\/([a-z0-9][a-z0-9._/-]*)(:[\w.-]+|@sha256:[0-9a-f]{64})$/;

/** An image in a private ECR registry: the registry's account and region, the repository and `:tag` or `@digest`. */
export interface ImageSpec {
  readonly uri: string;
  readonly repositoryArn: string;
  readonly account: string;
  readonly region: string;
  readonly repository: string;
  /** `:<tag>` or `@sha256:<digest>`, as it ends the URI. */
  readonly reference: string;
}

function imageSpec(account: string, region: string, repository: string, reference: string): ImageSpec {
  return {
    uri: `${account}.dkr.ecr.${region}.amazonaws.com/${repository}${reference}`,
    repositoryArn: `arn:aws:ecr:${region}:${account}:repository/${repository}`,
    account,
    region,
    repository,
    reference,
  };
}

/**
 * The manifest names each image once, in the registry CI pushes to. Every task pulls the same repository and
 * tag from its own region's registry (ECR replication copies it there, `pnpm infra preflight` checks it), so a
 * standby starts while the primary region is out, and no image layer crosses a region at every task start.
 */
export function imageIn(image: ImageSpec, region: string): ImageSpec {
  return imageSpec(image.account, region, image.repository, image.reference);
}

const Image = z
  .string()
  .regex(ECR_IMAGE, 'must be an ECR image with a tag or digest: <account>.dkr.ecr.<region>.amazonaws.com/<repo>:<tag>')
  .transform((uri): ImageSpec => {
    const [, account = '', region = '', repository = '', reference = ''] = ECR_IMAGE.exec(uri) ?? [];
    return imageSpec(account, region, repository, reference);
  });

const ImageTag = z
  .string()
  .regex(/^(?:[\w][\w.-]{0,127}|sha256:[0-9a-f]{64})$/, 'must be an image tag or a sha256: digest');

const ACM_ARN = /^arn:aws:acm:([a-z0-9-]+):\d{12}:certificate\/[0-9a-f-]{36}$/;
const CertificateArn = z.string().regex(ACM_ARN, 'must be an ACM certificate ARN');

function acmRegion(arn: string): string | undefined {
  return ACM_ARN.exec(arn)?.[1];
}

// Fargate's valid cpu/memory pairs (MiB): https://docs.aws.amazon.com/AmazonECS/latest/developerguide/fargate-tasks-services.html
const FARGATE_MEMORY: Record<number, (memory: number) => boolean> = {
  256: (m) => [512, 1024, 2048].includes(m),
  512: (m) => m >= 1024 && m <= 4096 && m % 1024 === 0,
  1024: (m) => m >= 2048 && m <= 8192 && m % 1024 === 0,
  2048: (m) => m >= 4096 && m <= 16384 && m % 1024 === 0,
  4096: (m) => m >= 8192 && m <= 30720 && m % 1024 === 0,
  8192: (m) => m >= 16384 && m <= 61440 && m % 4096 === 0,
  16384: (m) => m >= 32768 && m <= 122880 && m % 8192 === 0,
};

function serviceSizing(defaults: ServiceSizing) {
  return z
    .object({
      min: z
        .number()
        .int()
        .min(2, { error: 'must be at least 2: every service keeps a task in a second AZ' })
        .default(defaults.min),
      max: z.number().int().positive().default(defaults.max),
      cpu: z.number().int().default(defaults.cpu),
      memory: z.number().int().default(defaults.memory),
    })
    .strict()
    .superRefine((s, ctx) => {
      if (s.max < s.min) ctx.addIssue({ code: 'custom', path: ['max'], message: `must be at least min (${s.min})` });
      const memoryFits = FARGATE_MEMORY[s.cpu];
      if (!memoryFits) {
        ctx.addIssue({ code: 'custom', path: ['cpu'], message: `${s.cpu} is not a Fargate CPU size` });
      } else if (!memoryFits(s.memory)) {
        ctx.addIssue({
          code: 'custom',
          path: ['memory'],
          message: `${s.memory} MiB is not valid with ${s.cpu} CPU units`,
        });
      }
    })
    .prefault({});
}

function servicesSizing<R extends Record<string, ProcessRole>>(roles: R) {
  const shape = Object.fromEntries(
    Object.entries(roles).map(([name, role]) => [name, serviceSizing(role.defaults)]),
  ) as { [K in keyof R]: ReturnType<typeof serviceSizing> };
  const schema = z.object(shape).strict();
  // Every role has defaults, so an empty object is a complete input; TypeScript cannot see that through R.
  return schema.prefault({} as z.input<typeof schema>);
}

const DatabaseSizing = z
  .object({
    instanceClass: z
      .string()
      .regex(/^db\.[a-z0-9]+\.[a-z0-9]+$/, 'must be an RDS instance class, e.g. db.r7g.xlarge')
      .default('db.r7g.xlarge'),
    /** The writer is one more; readers sit in the other AZs and are failover targets. */
    readers: z.number().int().min(2, { error: 'must be at least 2, one per remaining AZ' }).max(15).default(2),
  })
  .strict()
  .prefault({});

const KafkaSizing = z
  .object({
    brokerType: z
      .string()
      .regex(/^kafka\.[a-z0-9]+\.[a-z0-9]+$/, 'must be an MSK broker type, e.g. kafka.m7g.large')
      .default('kafka.m7g.large'),
    brokers: z
      .number()
      .int()
      .positive()
      .refine((n) => n % 3 === 0, { error: 'must be a multiple of 3, the same number in each AZ' })
      .default(3),
    /** Partitions of each of the cell's topics; the ceiling on any consumer's task count. */
    partitions: z.number().int().min(1).max(1000).default(24),
    storageGiB: z.number().int().min(100).max(16384).default(1000),
  })
  .strict()
  .prefault({});

const CacheSizing = z
  .object({
    nodeType: z
      .string()
      .regex(/^cache\.[a-z0-9]+\.[a-z0-9]+$/, 'must be an ElastiCache node type, e.g. cache.r7g.large')
      .default('cache.r7g.large'),
    replicas: z.number().int().min(1).max(5).default(2),
  })
  .strict()
  .prefault({});

const Cell = z
  .object({
    id: CellId,
    region: Region,
    cidr: Cidr,
    sizing: z
      .object({
        database: DatabaseSizing,
        kafka: KafkaSizing,
        cache: CacheSizing,
        services: servicesSizing(CELL_ROLES),
      })
      .strict()
      .prefault({}),
    /** The region epoch its primary writes under (CELL_EPOCH); a promotion moves to a higher one in the DR region. */
    epoch: z.number().int().positive().default(1),
    /** The cell image's tag (or `sha256:` digest) when it differs from `images.cell`: a canary cell. */
    imageTag: ImageTag.optional(),
    /**
     * A warm secondary in another region: replicated database and topics, services scaled to zero. With
     * `promoted`, the secondary is the cell: it runs at size under `promoted.epoch` and its stack no
     * longer refers to anything in the primary region, so it applies with that region gone.
     */
    /**
     * Where AWS Backup copies a cell without `dr` daily (default: the control plane's region, which must then
     * differ from the cell's). Ignored for a cell with `dr`: its standby is the cross-region copy.
     */
    backupCopyRegion: Region.optional(),
    dr: z
      .object({
        region: Region,
        cidr: Cidr,
        promoted: z.object({ epoch: z.number().int().positive() }).strict().optional(),
      })
      .strict()
      .optional(),
  })
  .strict()
  .superRefine((cell, ctx) => {
    if (cell.dr?.promoted && cell.dr.promoted.epoch <= cell.epoch) {
      ctx.addIssue({
        code: 'custom',
        path: ['dr', 'promoted', 'epoch'],
        message: `must be above the primary's epoch (${cell.epoch}), so the old primary's writes are fenced`,
      });
    }
    const { partitions } = cell.sizing.kafka;
    for (const role of CELL_ROLE_NAMES) {
      if (CELL_ROLES[role].scaling.kind !== 'consumer-lag') continue;
      const { max } = cell.sizing.services[role];
      if (max > partitions) {
        ctx.addIssue({
          code: 'custom',
          path: ['sizing', 'services', role, 'max'],
          message: `${max} exceeds the ${partitions} partitions of the cell's topics: the extra consumers would idle`,
        });
      }
    }
    if (cell.backupCopyRegion && cell.backupCopyRegion === cell.region) {
      ctx.addIssue({ code: 'custom', path: ['backupCopyRegion'], message: 'must differ from the cell region' });
    }
    if (cell.dr && cell.dr.region === cell.region) {
      ctx.addIssue({ code: 'custom', path: ['dr', 'region'], message: 'must differ from the cell region' });
    }
  });

const HttpsUrl = z.url({ protocol: /^https$/, error: 'must be an https URL' });

const ControlPlane = z
  .object({
    region: Region,
    cidr: Cidr,
    /** Where AWS Backup copies the control plane's database daily (it has no DR standby). */
    backupCopyRegion: Region.optional(),
    /**
     * The platform's private DNS zone (src/naming.ts InternalName): the control plane's API is
     * `control-plane.<domain>`, a cell's `<cell id>.<domain>`. Each region's certificate must cover `*.<domain>`.
     */
    internalDomain: z.string().regex(/^[a-z0-9.-]+\.[a-z]{2,}$/, 'must be a DNS name'),
    database: DatabaseSizing,
    cache: CacheSizing,
    services: servicesSizing(CONTROL_PLANE_ROLES),
    reporting: z
      .object({
        /** Projections are rebuilt from the cells' streams, so old versions are only an undo buffer. */
        noncurrentVersionDays: z.number().int().min(1).default(30),
        infrequentAccessAfterDays: z.number().int().min(30).default(90),
      })
      .strict()
      .prefault({}),
  })
  .strict();

const Edge = z
  .object({
    domainNames: z.array(z.string().regex(/^[a-z0-9.-]+\.[a-z]{2,}$/, 'must be a DNS name')).min(1),
    /** The viewer certificate, which CloudFront only takes from us-east-1. */
    certificateArn: CertificateArn.refine((arn) => acmRegion(arn) === EDGE_REGION, {
      error: `must be a certificate in ${EDGE_REGION}`,
    }),
    /** Requests per client IP per 5 minutes, any method. */
    rateLimitPerIp: z.number().int().min(10).default(3000),
    /** Requests per client IP per 5 minutes that change state (POST, PUT, PATCH, DELETE). */
    writeRateLimitPerIp: z.number().int().min(10).default(600),
  })
  .strict();

/** A public key that verifies tickets. Never a private one: the signing keys are each cell's secret. */
const TicketPublicKey = z
  .object({
    kty: z.literal('OKP'),
    crv: z.literal('Ed25519'),
    x: z.string().regex(/^[A-Za-z0-9_-]{43}$/, { error: 'must be a base64url Ed25519 public key' }),
    kid: z.string().min(1).max(100),
  })
  .strict();

export const ManifestSchema = z
  .object({
    images: z.object({ cell: Image, controlPlane: Image, router: Image }).strict(),
    /**
     * Per region, the certificate the internal load balancers present. It must cover the names the
     * router and the cells use for one another, and the edge domain (CloudFront forwards the viewer's Host).
     */
    certificates: z.partialRecord(Region, CertificateArn),
    controlPlane: ControlPlane,
    /** The buyers' and promoters' identity provider, whose tokens the control plane and the cells verify. */
    identity: z.object({ jwksUrl: HttpsUrl, issuer: z.string().min(1), audience: z.string().min(1) }).strict(),
    /**
     * Every cell's ticket-verifying key. Each cell publishes them all to door scanners, so a ticket
     * issued before its event was evacuated to another cell still scans there.
     */
    ticketKeys: z.array(TicketPublicKey).min(1, { error: 'must list the ticket keys door scanners verify with' }),
    edge: Edge,
    /**
     * Where buyers' mail comes from (order confirmations, refund and cancellation notices). Each cell sends as
     * `<fromLocalPart>@<cell id>.<domain>` through SES in its own region, so a cell's sending identity and
     * reputation are its own, as its other stores are. Default domain: `mail.` and the edge's first domain name.
     */
    mail: z
      .object({
        domain: z
          .string()
          .regex(/^[a-z0-9.-]+\.[a-z]{2,}$/, 'must be a DNS name')
          .optional(),
        fromLocalPart: z
          .string()
          .regex(/^[a-z0-9._-]{1,64}$/, 'must be a mailbox name: lowercase letters, digits, dot, dash, underscore')
          .default('tickets'),
        displayName: z
          .string()
          .min(1)
          .max(64)
          .regex(/^[^"<>\r\n]+$/, 'no quotes, angle brackets or line breaks')
          .default('Onsale tickets'),
      })
      .strict()
      .prefault({}),
    cells: z.array(Cell).min(1, { error: 'must list at least one cell' }),
  })
  .strict()
  .superRefine((m, ctx) => {
    const kids = new Set<string>();
    m.ticketKeys.forEach((key, i) => {
      if (kids.has(key.kid))
        ctx.addIssue({ code: 'custom', path: ['ticketKeys', i, 'kid'], message: `duplicate kid "${key.kid}"` });
      kids.add(key.kid);
    });
    const seen = new Map<string, number>();
    m.cells.forEach((cell, i) => {
      const first = seen.get(cell.id);
      if (first === undefined) seen.set(cell.id, i);
      else
        ctx.addIssue({
          code: 'custom',
          path: ['cells', i, 'id'],
          message: `duplicate cell id "${cell.id}" (also cells[${first}])`,
        });
    });

    // Peered VPCs cannot share addresses.
    const networks: { path: (string | number)[]; cidr: string }[] = [
      { path: ['controlPlane', 'cidr'], cidr: m.controlPlane.cidr },
    ];
    m.cells.forEach((cell, i) => {
      networks.push({ path: ['cells', i, 'cidr'], cidr: cell.cidr });
      if (cell.dr) networks.push({ path: ['cells', i, 'dr', 'cidr'], cidr: cell.dr.cidr });
    });
    networks.forEach((net, i) => {
      const clash = networks.slice(0, i).find((earlier) => overlaps(earlier.cidr, net.cidr));
      if (clash) {
        ctx.addIssue({
          code: 'custom',
          path: net.path,
          message: `${net.cidr} overlaps ${formatPath(clash.path)} (${clash.cidr})`,
        });
      }
    });

    // A cell without DR copies its backups to another region: by default the control plane's.
    m.cells.forEach((cell, i) => {
      if (!cell.dr && !cell.backupCopyRegion && cell.region === m.controlPlane.region) {
        ctx.addIssue({
          code: 'custom',
          path: ['cells', i, 'backupCopyRegion'],
          message: `required: the cell has no dr and shares the control plane's region (${cell.region})`,
        });
      }
    });

    const regionsInUse: { path: (string | number)[]; region: AwsRegion }[] = [
      { path: ['controlPlane', 'region'], region: m.controlPlane.region },
    ];
    m.cells.forEach((cell, i) => {
      regionsInUse.push({ path: ['cells', i, 'region'], region: cell.region });
      if (cell.dr) regionsInUse.push({ path: ['cells', i, 'dr', 'region'], region: cell.dr.region });
    });
    for (const { path, region } of regionsInUse) {
      if (!m.certificates[region]) {
        ctx.addIssue({
          code: 'custom',
          path: ['certificates', region],
          message: `missing: ${formatPath(path)} runs a load balancer in ${region}`,
        });
      }
    }
    for (const [region, arn] of Object.entries(m.certificates)) {
      if (arn && acmRegion(arn) !== region) {
        ctx.addIssue({
          code: 'custom',
          path: ['certificates', region],
          message: `is a certificate in ${acmRegion(arn)}`,
        });
      }
    }
  });

export type Manifest = z.output<typeof ManifestSchema>;
export type ManifestInput = z.input<typeof ManifestSchema>;
export type CellSpec = Manifest['cells'][number];

export class ManifestError extends Error {
  override name = 'ManifestError';
  constructor(readonly problems: readonly string[]) {
    super(`invalid cells manifest:\n  ${problems.join('\n  ')}`);
  }
}

function formatPath(path: readonly PropertyKey[]): string {
  return path.reduce<string>((out, key) => {
    if (typeof key === 'number') return `${out}[${key}]`;
    return out ? `${out}.${String(key)}` : String(key);
  }, '');
}

/** Validates before any construct exists, so a bad entry never reaches synthesis half-applied. */
export function parseManifest(input: unknown): Manifest {
  const parsed = ManifestSchema.safeParse(input);
  if (parsed.success) return parsed.data;
  throw new ManifestError(
    parsed.error.issues.map((issue) => `${formatPath(issue.path) || '(manifest)'}: ${issue.message}`),
  );
}

export function loadManifest(path: string): Manifest {
  return parseManifest(JSON.parse(readFileSync(path, 'utf8')));
}

/** The validated manifest has a certificate for every region that runs a load balancer. */
/** Where the router and the cells reach the control plane's API: CONTROL_PLANE_URL, and the JWKS under it. */
export function controlPlaneApiUrl(manifest: Manifest): string {
  return `https://${InternalName.controlPlaneApi(manifest.controlPlane.internalDomain)}`;
}

/** The cell's API as the control plane's registry must hold it (POST /operator/cells `baseUrl`). */
export function cellApiUrl(manifest: Manifest, cellId: string, standby = false): string {
  const domain = manifest.controlPlane.internalDomain;
  return `https://${standby ? InternalName.standbyCellApi(domain, cellId) : InternalName.cellApi(domain, cellId)}`;
}

export function certificateFor(manifest: Manifest, region: AwsRegion): string {
  const arn = manifest.certificates[region];
  if (!arn) throw new ManifestError([`certificates.${region}: missing`]);
  return arn;
}

/** A cell's mail sender: its own SES identity (a domain under the manifest's mail domain) and the From it sends as. */
export interface CellMailSender {
  readonly domain: string;
  readonly address: string;
  /** MAIL_FROM: the display name and the address. */
  readonly from: string;
}

export function cellMailSender(manifest: Manifest, cellId: string): CellMailSender {
  const domain = `${cellId}.${manifest.mail.domain ?? `mail.${manifest.edge.domainNames[0]}`}`;
  const address = `${manifest.mail.fromLocalPart}@${domain}`;
  return { domain, address, from: `${manifest.mail.displayName} <${address}>` };
}

/** The cell image a cell runs: `images.cell`, or the same repository at the cell's own tag. */
export function cellImage(manifest: Manifest, cell: CellSpec): ImageSpec {
  const base = manifest.images.cell;
  if (!cell.imageTag) return base;
  const reference = cell.imageTag.startsWith('sha256:') ? `@${cell.imageTag}` : `:${cell.imageTag}`;
  return imageSpec(base.account, base.region, base.repository, reference);
}
