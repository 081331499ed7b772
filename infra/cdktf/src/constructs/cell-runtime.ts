import { EcsCluster } from '@cdktf/provider-aws/lib/ecs-cluster';
import { KmsAlias } from '@cdktf/provider-aws/lib/kms-alias';
import { KmsKey } from '@cdktf/provider-aws/lib/kms-key';
import { SecretsmanagerSecret } from '@cdktf/provider-aws/lib/secretsmanager-secret';
import { deadLetterReplayGroupPrefix } from '@onsale/cell/messaging/consumers';
import type { ProcessName } from '@onsale/processes';
import { Construct } from 'constructs';
import type { AwsContext } from '../aws-context';
import { checkovSkip, SkipReason } from '../checkov';
import type { AwsRegion, CellMailSender, CellSpec, ImageSpec, Manifest } from '../manifest';
import { AppMetric, CELL_DIMENSION, CELL_NAMESPACE } from '../metrics';
import { cellSecretName, secretSegment } from '../naming';
import { cellPrewarmRole } from '../prewarm';
import {
  CELL_ROLE_NAMES,
  CELL_ROLES,
  type CellRole,
  cellGroupPrefix,
  cellTopics,
  databaseUser,
  type ProcessRole,
  roleConsumerGroup,
} from '../roles';
import { Alarms } from './alarms';
import { AuroraPostgres } from './aurora';
import {
  type DeployPlan,
  deployPlan,
  FargateService,
  type OperatorTask,
  OperatorTaskRole,
  operatorTask,
  type ServiceScaling,
} from './fargate-service';
import { allow } from './firewall';
import { putMetricData, type Statement } from './iam';
import { InternalAlb } from './internal-alb';
import { KafkaCluster } from './kafka';
import { MailSender } from './mail-sender';
import { Network } from './network';
import { Peering, type PeerNetwork } from './peering';
import { RedisCache } from './redis';
import { TicketsBucket } from './tickets-bucket';

/** Secret ARNs per role, keyed by the environment variable each one fills. */
export type RoleSecrets = Partial<Record<CellRole, Record<string, string>>>;

export type CellMode =
  /** `drRegion` makes the database a global primary and replicates the secrets there. */
  | { readonly kind: 'primary'; readonly drRegion?: AwsRegion }
  | { readonly kind: 'standby'; readonly globalClusterIdentifier: string; readonly secrets: RoleSecrets }
  /** The standby after a region failover: the cell's writer, at size, under a new epoch. */
  | { readonly kind: 'promoted'; readonly secrets: RoleSecrets; readonly masterSecretArn: string };

export interface ControlPlaneLink {
  readonly peer: PeerNetwork;
  /** The control plane's private subnets: the router, the waiting room and the reporting consumer. */
  readonly clientCidrs: readonly string[];
}

export interface CellRuntimeProps {
  readonly ctx: AwsContext;
  readonly prefix: string;
  readonly cell: CellSpec;
  readonly cidr: string;
  readonly image: ImageSpec;
  readonly certificateArn: string;
  readonly controlPlane: ControlPlaneLink;
  readonly mode: CellMode;
  /** CELL_EPOCH of every task: the primary's, or the promotion's. */
  readonly epoch: number;
  readonly identity: Manifest['identity'];
  /** Every cell's ticket-verifying key, which the API publishes to door scanners. */
  readonly ticketKeys: Manifest['ticketKeys'];
  /** The control plane's API, where cells fetch the admission-token JWKS. */
  readonly controlPlaneApiUrl: string;
  /** The notifier's sender: this cell's SES identity in this region, and its From. */
  readonly mail: CellMailSender;
}

/**
 * Workers answer /healthz, /readyz and /metrics here (HEALTH_PORT), on the task's loopback; the API answers on its
 * HTTP port. The control plane's router has both: its metrics are here, off the port the internet reaches.
 */
export const WORKER_HEALTH_PORT = 8081;
/** Replication factor of a cell's topics: one broker per AZ, min ISR 2, so acks=all survives losing one. */
export const TOPIC_REPLICATION_FACTOR = 3;

const CellAlarmThreshold = {
  /** Half the seeds' 0.8 s p99 ceiling, as an average (CloudWatch has no percentiles of a Prometheus histogram). */
  holdAverageSeconds: 0.4,
  /** Refusals are normal in a stampede; most requests refused means the availability cache is lying. */
  holdRefusalRatio: 0.5,
  /** The release controller backs off at this share of the pool in use. */
  connectionUse: 0.85,
  /** Deadlocks per second; sorted seat locking should make any sustained rate a bug. */
  deadlocksPerSecond: 0.1,
  outboxAgeSeconds: 30,
  /** As ConsumerLagHigh in ops/prometheus/alerts.yml. */
  consumerLag: 1_000,
  refusedWebhooksPerMinute: 3,
  reconcilerActionsPer5Minutes: 20,
} as const;

/**
 * Everything a cell runs in one region: network, database, topics, cache, services and alarms. The cell
 * stack builds it as the primary; the DR stack builds the same thing as a warm standby.
 */
export class CellRuntime extends Construct {
  readonly network: Network;
  readonly database: AuroraPostgres;
  /** The cell's customer-managed key (database, topics, cache, secrets, backups). */
  readonly key: KmsKey;
  readonly kafka: KafkaCluster;
  readonly cache: RedisCache;
  readonly apiLoadBalancer: InternalAlb;
  readonly secrets: RoleSecrets;
  readonly alarms: Alarms;
  readonly cluster: EcsCluster;
  /** The notifier's SES identity in this region. */
  readonly mail: MailSender;
  /** The deploy steps, run to completion before services take traffic: ARNs of their task definitions. */
  readonly oneOffTasks: Record<string, string> = {};
  /** What the deploy command runs, in order, then rolls (output `deploy`). */
  readonly deployPlan: DeployPlan;
  private readonly roles: FargateService[] = [];
  /** The tasks an operator runs from a runbook with `aws ecs run-task` (empty on a standby, which has no writer). */
  readonly operatorTasks: Record<string, OperatorTask> = {};
  private readonly cellId: string;
  private readonly purchaseTopic: string;

  constructor(scope: Construct, id: string, props: CellRuntimeProps) {
    super(scope, id);
    const { ctx, cell, prefix, mode } = props;
    const topics = cellTopics(cell.id);
    this.cellId = cell.id;
    this.purchaseTopic = topics.purchase;
    const standby = mode.kind === 'standby';
    const { database, kafka, cache } = cell.sizing;

    const key = new KmsKey(this, 'key', {
      description: `${prefix}: database, topics, cache and secrets at rest`,
      enableKeyRotation: true,
      deletionWindowInDays: 30,
    });
    checkovSkip(key, { CKV2_AWS_64: SkipReason.defaultKeyPolicy });
    this.key = key;
    new KmsAlias(this, 'key-alias', { name: `alias/${prefix}`, targetKeyId: key.keyId });

    // Stripe is on the purchase path: losing an AZ must not take the other AZs' egress with it.
    this.network = new Network(this, 'network', { ctx, name: prefix, cidr: props.cidr, egress: 'nat-per-az' });
    new Peering(this, 'control-plane-peering', {
      name: `${prefix}-control-plane`,
      network: this.network,
      peer: props.controlPlane.peer,
    });

    this.database = new AuroraPostgres(this, 'database', {
      ctx,
      name: prefix,
      network: this.network,
      kmsKeyArn: key.arn,
      instanceClass: database.instanceClass,
      readers: database.readers,
      role:
        mode.kind === 'standby'
          ? { kind: 'secondary', globalClusterIdentifier: mode.globalClusterIdentifier }
          : mode.kind === 'promoted'
            ? { kind: 'promoted' }
            : { kind: 'primary', global: mode.drRegion !== undefined },
      masterSecretReplicas: mode.kind === 'primary' && mode.drRegion ? [mode.drRegion] : undefined,
    });

    this.kafka = new KafkaCluster(this, 'kafka', {
      ctx,
      name: prefix,
      network: this.network,
      kmsKeyArn: key.arn,
      brokerType: kafka.brokerType,
      brokers: kafka.brokers,
      partitions: kafka.partitions,
      storageGiB: kafka.storageGiB,
      replicationSource: mode.kind === 'primary' && mode.drRegion !== undefined,
    });
    // The control plane's reporting consumer reads the cell's stream across the peering.
    this.kafka.allowCidrs('control-plane', props.controlPlane.clientCidrs);

    const redisRoles = CELL_ROLE_NAMES.filter((role) => (CELL_ROLES[role] as ProcessRole).redis);
    this.cache = new RedisCache(this, 'cache', {
      name: prefix,
      network: this.network,
      kmsKeyArn: key.arn,
      nodeType: cache.nodeType,
      replicas: cache.replicas,
      users: redisRoles,
    });

    this.secrets = mode.kind === 'primary' ? this.createSecrets(cell, key.arn, mode.drRegion) : mode.secrets;
    // Replicated secrets are under the DR region's AWS-managed key, which needs no grant.
    const secretsKeyArn = mode.kind === 'primary' ? key.arn : undefined;

    const apiRole = CELL_ROLES.api;
    this.apiLoadBalancer = new InternalAlb(this, 'api-alb', {
      ctx: props.ctx,
      name: `${prefix}-api`,
      network: this.network,
      certificateArn: props.certificateArn,
      targetPort: apiRole.http.port,
      healthPath: apiRole.http.healthPath,
      // The router and the release controller, in the control plane's private subnets, are the only callers.
      clients: [{ id: 'control-plane', source: { cidrs: props.controlPlane.clientCidrs } }],
    });

    const ecs = new EcsCluster(this, 'ecs', {
      name: prefix,
      setting: [{ name: 'containerInsights', value: 'enabled' }],
    });
    this.cluster = ecs;

    const tickets = new TicketsBucket(this, 'tickets', { cellId: cell.id, kmsKeyArn: key.arn });
    const mailSender = new MailSender(this, 'mail', { ctx, sender: props.mail });
    this.mail = mailSender;

    const base = (user: string): Record<string, string> => ({
      CELL_ID: cell.id,
      CELL_EPOCH: String(props.epoch),
      CELL_REGION: ctx.region,
      AWS_REGION: ctx.region,
      DATABASE_URL: this.database.proxyUrl(user),
      DATABASE_AUTH: 'iam',
    });
    const kafkaClient = {
      KAFKA_BROKERS: this.kafka.bootstrapBrokers,
      KAFKA_AUTH: 'aws-msk-iam',
    };

    for (const roleName of CELL_ROLE_NAMES) {
      const role: ProcessRole = CELL_ROLES[roleName];
      const user = databaseUser(roleName);
      const group = roleConsumerGroup(cell.id, roleName);

      const environment: Record<string, string> = base(user);
      const statements: Statement[] = [this.database.connectStatement(user), putMetricData(CELL_NAMESPACE)];

      if (role.kafka) {
        Object.assign(environment, kafkaClient);
        statements.push(
          ...this.kafka.grant({
            reads: role.kafka.reads.map((t) => topics[t]),
            writes: role.kafka.writes.map((t) => topics[t]),
            group,
            describeGroups: role.kafka.describes?.groups ? cellGroupPrefix(cell.id) : undefined,
            describeTopics: role.kafka.describes?.topics.map((t) => topics[t]),
            idempotentProducer: role.kafka.idempotentProducer,
          }),
        );
      }
      if (role.redis) {
        Object.assign(environment, {
          REDIS_URL: this.cache.url(roleName),
          REDIS_AUTH: 'iam',
          REDIS_CACHE_NAME: this.cache.name,
        });
        statements.push(this.cache.connectStatement(roleName));
      }
      if (role.http) {
        Object.assign(environment, {
          HOST: '0.0.0.0',
          PORT: String(role.http.port),
          IDENTITY_JWKS_URL: props.identity.jwksUrl,
          IDENTITY_ISSUER: props.identity.issuer,
          IDENTITY_AUDIENCE: props.identity.audience,
          ADMISSION_JWKS_URL: `${props.controlPlaneApiUrl}/.well-known/jwks.json`,
          TICKET_PUBLIC_JWKS: JSON.stringify({
            keys: props.ticketKeys.map((k) => ({ ...k, alg: 'EdDSA', use: 'sig' })),
          }),
        });
      } else {
        environment.HEALTH_PORT = String(WORKER_HEALTH_PORT);
      }
      // The ticket worker stores the order PDFs and void lists; the API serves them.
      if (roleName === 'ticket' || roleName === 'api') {
        Object.assign(environment, { TICKETS_BUCKET: tickets.bucket.bucket, S3_REGION: ctx.region });
        statements.push(...(roleName === 'ticket' ? tickets.writeStatements() : tickets.readStatements()));
      }

      if (roleName === 'notifier') {
        Object.assign(environment, { MAIL_TRANSPORT: 'ses', MAIL_FROM: props.mail.from });
        statements.push(mailSender.sendStatement());
      }

      const service = new FargateService(this, `service-${roleName}`, {
        ctx,
        prefix,
        role: roleName,
        process: role.process,
        cluster: ecs,
        network: this.network,
        image: props.image,
        sizing: cell.sizing.services[roleName],
        prewarmed: cellPrewarmRole(roleName) !== undefined,
        environment,
        secrets: this.secrets[roleName] ?? {},
        secretsKeyArn,
        taskStatements: statements,
        healthPort: role.http ? undefined : WORKER_HEALTH_PORT,
        metricsNamespace: CELL_NAMESPACE,
        http: role.http ? { port: role.http.port, targetGroupArn: this.apiLoadBalancer.targetGroup.arn } : undefined,
        scaling: this.scaling(roleName, role, group ?? ''),
        standby,
      });
      this.roles.push(service);

      this.database.allowClient(roleName, service.securityGroup);
      if (role.kafka) this.kafka.allowClient(roleName, service.securityGroup);
      if (role.redis) this.cache.allowClient(roleName, service.securityGroup);
      if (role.http) {
        // The API's only way in: its load balancer's security group.
        allow(this, `alb-to-${roleName}`, {
          from: { group: this.apiLoadBalancer.securityGroup },
          to: service.securityGroup,
          port: role.http.port,
          description: `ALB to ${roleName}`,
        });
      }
    }

    // A standby's database is a read-only replica: its deploy steps run after promotion.
    if (!standby) {
      const masterSecretArn = mode.kind === 'promoted' ? mode.masterSecretArn : this.database.masterSecretArn;
      if (!masterSecretArn) throw new Error(`${prefix}: a writer without a master secret cannot be migrated`);
      this.deploySteps(props, ecs, masterSecretArn, key.arn);
      this.replayTask(props, ecs);
    }

    this.deployPlan = deployPlan(ecs, this.network, this.roles);
    this.alarms = this.createAlarms(prefix);
  }

  /**
   * The one-off tasks of a deploy: migrations as the master user straight to the writer (they create the
   * `onsale_<role>` IAM users the services log in as, and raise the epoch row to CELL_EPOCH), then topics
   * with the manifest's partitions and RF 3.
   */
  private deploySteps(props: CellRuntimeProps, ecs: EcsCluster, masterSecretArn: string, keyArn: string): void {
    const { ctx, cell, prefix, mode } = props;
    const topics = cellTopics(cell.id);
    const oneOff = (role: string, process: ProcessName, environment: Record<string, string>, statements: Statement[]) =>
      new FargateService(this, `task-${role}`, {
        ctx,
        prefix,
        role,
        process,
        cluster: ecs,
        network: this.network,
        image: props.image,
        sizing: { min: 1, max: 1, cpu: 512, memory: 1024 },
        environment,
        secrets: role === 'migrate' ? { DATABASE_PASSWORD: { arn: masterSecretArn, jsonKey: 'password' } } : {},
        secretsKeyArn: mode.kind === 'primary' ? keyArn : undefined,
        taskStatements: statements,
        scaling: { kind: 'fixed' },
        standby: false,
        oneOff: true,
      });

    const migrate = oneOff(
      'migrate',
      'cell-migrate',
      {
        CELL_ID: cell.id,
        CELL_EPOCH: String(props.epoch),
        AWS_REGION: ctx.region,
        DATABASE_URL: this.database.masterUrl(),
        DATABASE_AUTH: 'password',
        DATABASE_ROLE_USERS: CELL_ROLE_NAMES.map(databaseUser).join(','),
      },
      [],
    );
    this.database.allowMigrations(migrate.securityGroup);
    this.roles.push(migrate);
    this.oneOffTasks.migrate = migrate.taskDefinition.arn;

    const provision = oneOff(
      'provision-topics',
      'cell-provision-topics',
      {
        CELL_ID: cell.id,
        AWS_REGION: ctx.region,
        KAFKA_BROKERS: this.kafka.bootstrapBrokers,
        KAFKA_AUTH: 'aws-msk-iam',
        KAFKA_PARTITIONS: String(cell.sizing.kafka.partitions),
        KAFKA_REPLICATION_FACTOR: String(TOPIC_REPLICATION_FACTOR),
      },
      this.kafka.grant({ reads: [], writes: [], creates: Object.values(topics), idempotentProducer: false }),
    );
    this.kafka.allowClient('provision-topics', provision.securityGroup);
    this.roles.push(provision);
    this.oneOffTasks['provision-topics'] = provision.taskDefinition.arn;
  }

  /**
   * Dead-letter replay (runbooks/replay-dead-letters.md), signed in to MSK with IAM as the services are: it reads
   * the DLQ in its own groups (`<cell>.dlq-replay`, or a dry run's `<cell>.dlq-dry-run-<ms>`), and writes the
   * purchase topic the dead letters came from, with the idempotent producer every publisher of the cell uses.
   */
  private replayTask(props: CellRuntimeProps, ecs: EcsCluster): void {
    const { ctx, cell, prefix } = props;
    const topics = cellTopics(cell.id);
    const replay = new FargateService(this, 'task-replay-dead-letters', {
      ctx,
      prefix,
      role: OperatorTaskRole.replayDeadLetters,
      process: 'cell-replay-dead-letters',
      cluster: ecs,
      network: this.network,
      image: props.image,
      sizing: { min: 1, max: 1, cpu: 256, memory: 512 },
      environment: {
        CELL_ID: cell.id,
        AWS_REGION: ctx.region,
        KAFKA_BROKERS: this.kafka.bootstrapBrokers,
        KAFKA_AUTH: 'aws-msk-iam',
      },
      secrets: {},
      taskStatements: this.kafka.grant({
        reads: [topics.deadLetter],
        writes: [topics.purchase],
        // Its lag check before it starts (fetchOffsets, DescribeGroup) and its membership are on these groups only.
        group: `${deadLetterReplayGroupPrefix(cell.id)}*`,
        idempotentProducer: true,
      }),
      scaling: { kind: 'fixed' },
      standby: false,
      oneOff: true,
    });
    this.kafka.allowClient(OperatorTaskRole.replayDeadLetters, replay.securityGroup);
    this.operatorTasks[OperatorTaskRole.replayDeadLetters] = operatorTask(replay);
  }

  private scaling(roleName: CellRole, role: ProcessRole, group: string): ServiceScaling {
    const { scaling } = role;
    switch (scaling.kind) {
      case 'requests':
        return {
          kind: 'requests',
          resourceLabel: this.apiLoadBalancer.requestCountLabel,
          requestsPerTaskPerMinute: scaling.requestsPerTaskPerMinute,
        };
      case 'consumer-lag':
        return {
          kind: 'metric',
          metric: {
            namespace: CELL_NAMESPACE,
            metricName: AppMetric.consumerLag,
            dimensions: this.lagDimensions(group, roleName),
            target: scaling.maxLag,
          },
        };
      case 'cell-metric':
        return {
          kind: 'metric',
          metric: {
            namespace: CELL_NAMESPACE,
            metricName: scaling.metric,
            dimensions: { [CELL_DIMENSION]: this.cellId },
            target: scaling.target,
          },
        };
      case 'fixed':
        return { kind: 'fixed' };
    }
  }

  /** The consumer group's lag as its own processes report it (`onsale_consumer_lag{group}`). */
  private lagDimensions(group: string, roleName: CellRole): Record<string, string> {
    if (!group) throw new Error(`${roleName} scales on consumer lag but reads no topic`);
    return { [CELL_DIMENSION]: this.cellId, group };
  }

  private createSecrets(cell: CellSpec, keyArn: string, drRegion: AwsRegion | undefined): RoleSecrets {
    const secrets: RoleSecrets = {};
    for (const roleName of CELL_ROLE_NAMES) {
      const role: ProcessRole = CELL_ROLES[roleName];
      if (role.secrets.length === 0) continue;
      secrets[roleName] = Object.fromEntries(
        role.secrets.map((envName) => {
          const secret = new SecretsmanagerSecret(this, `secret-${roleName}-${secretSegment(envName)}`, {
            name: cellSecretName(cell.id, roleName, envName),
            description: `${envName} for the ${roleName} tasks of cell ${cell.id}; the value is set by an operator`,
            kmsKeyId: keyArn,
            recoveryWindowInDays: 30,
            // The DR stack's key does not exist when this stack applies (and must not be a dependency of
            // it), so replicas use the DR region's AWS-managed Secrets Manager key.
            replica: drRegion ? [{ region: drRegion }] : undefined,
          });
          checkovSkip(secret, { CKV2_AWS_57: SkipReason.operatorSecret });
          return [envName, secret.arn];
        }),
      );
    }
    return secrets;
  }

  private createAlarms(prefix: string): Alarms {
    const alarms = new Alarms(this, 'alarms', prefix);
    const cell = { [CELL_DIMENSION]: this.cellId };
    const custom = { namespace: CELL_NAMESPACE, dimensions: cell };
    const t = CellAlarmThreshold;

    alarms.metric('hold-latency', {
      ...custom,
      description: `Hold transactions average above ${t.holdAverageSeconds} s for 3 minutes (the p99 ceiling is 0.8 s; the burn-rate alerts in ops/prometheus/alerts.yml read the buckets): the waiting room is releasing faster than the cell holds`,
      metricName: AppMetric.holdTransaction,
      statistic: 'Average',
      threshold: t.holdAverageSeconds,
    });
    alarms.ratio('hold-refusal-rate', {
      ...custom,
      description: 'Most hold requests are refused: buyers are being shown seats that are gone',
      numerator: { metricName: AppMetric.holdsRefused, statistic: 'Sum' },
      denominator: { metricName: AppMetric.holdsPlaced, statistic: 'Sum' },
      // refused / (placed + refused) above the ratio, written over placed so no third query is needed.
      threshold: t.holdRefusalRatio / (1 - t.holdRefusalRatio),
      periods: 5,
    });
    alarms.ratio('db-connections', {
      description: 'RDS Proxy pool nearly exhausted: new transactions will wait, then fail',
      namespace: 'AWS/RDS',
      dimensions: { ProxyName: this.database.proxy.name, TargetGroup: 'default', TargetRole: 'READ_WRITE' },
      numerator: { metricName: 'DatabaseConnections', statistic: 'Maximum' },
      denominator: { metricName: 'MaxDatabaseConnectionsAllowed', statistic: 'Maximum' },
      threshold: t.connectionUse,
    });
    alarms.metric('db-deadlocks', {
      description: 'Deadlocks on the writer: seat locks are being taken out of order somewhere',
      namespace: 'AWS/RDS',
      dimensions: { DBClusterIdentifier: this.database.cluster.clusterIdentifier, Role: 'WRITER' },
      metricName: 'Deadlocks',
      statistic: 'Average',
      threshold: t.deadlocksPerSecond,
    });
    alarms.metric('outbox-age', {
      ...custom,
      description: `Oldest unpublished outbox row older than ${t.outboxAgeSeconds} s: committed facts are not reaching Kafka`,
      metricName: AppMetric.outboxOldestAge,
      statistic: 'Maximum',
      threshold: t.outboxAgeSeconds,
    });
    for (const roleName of CELL_ROLE_NAMES) {
      if (CELL_ROLES[roleName].scaling.kind !== 'consumer-lag') continue;
      alarms.metric(`consumer-lag-${roleName}`, {
        description: `${roleName} is ${t.consumerLag}+ messages behind on ${this.purchaseTopic}`,
        namespace: CELL_NAMESPACE,
        dimensions: this.lagDimensions(roleConsumerGroup(this.cellId, roleName) ?? '', roleName),
        metricName: AppMetric.consumerLag,
        statistic: 'Maximum',
        threshold: t.consumerLag,
      });
    }
    alarms.metric('dlq-arrivals', {
      ...custom,
      description: 'Messages were dead-lettered: replay or discard them (runbooks/replay-dead-letters.md)',
      metricName: AppMetric.dlqArrivals,
      statistic: 'Sum',
      threshold: 0,
      periods: 1,
    });
    alarms.metric('webhooks-refused', {
      namespace: CELL_NAMESPACE,
      dimensions: { ...cell, outcome: 'bad_signature' },
      description: 'Stripe webhooks refused for their signature: a rotated secret not deployed, or forged calls',
      metricName: AppMetric.webhooks,
      statistic: 'Sum',
      threshold: t.refusedWebhooksPerMinute,
      periods: 5,
    });
    alarms.metric('reconciler-actions', {
      ...custom,
      description:
        'The reconciler keeps pushing stuck orders forward: payments or the saga are not progressing on their own',
      metricName: AppMetric.reconcilerActions,
      statistic: 'Sum',
      threshold: t.reconcilerActionsPer5Minutes,
      periodSeconds: 300,
      periods: 1,
    });
    alarms.metric('oversell', {
      ...custom,
      description: 'A second ticket was attempted for a seat. This must stay 0: page now',
      metricName: AppMetric.oversell,
      statistic: 'Sum',
      threshold: 0,
      periods: 1,
    });
    return alarms;
  }
}
