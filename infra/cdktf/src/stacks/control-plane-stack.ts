import { DataAwsEc2ManagedPrefixList } from '@cdktf/provider-aws/lib/data-aws-ec2-managed-prefix-list';
import { EcsCluster } from '@cdktf/provider-aws/lib/ecs-cluster';
import { KmsAlias } from '@cdktf/provider-aws/lib/kms-alias';
import { KmsKey } from '@cdktf/provider-aws/lib/kms-key';
import { Route53Zone } from '@cdktf/provider-aws/lib/route53-zone';
import { SecretsmanagerSecret } from '@cdktf/provider-aws/lib/secretsmanager-secret';
import { CONTROL_PLANE_FACTS_TOPIC } from '@onsale/contracts/control-plane-facts';
import { ReportingConfig } from '@onsale/reporting/config';
import { CONTROL_PLANE_SOURCE } from '@onsale/reporting/facts';
import { TerraformOutput } from 'cdktf';
import type { Construct } from 'constructs';
import { type AwsContext, arn } from '../aws-context';
import { checkovSkip, SkipReason } from '../checkov';
import { Alarms } from '../constructs/alarms';
import { AuroraPostgres } from '../constructs/aurora';
import { Backups } from '../constructs/backups';
import { type ControlPlaneLink, TOPIC_REPLICATION_FACTOR, WORKER_HEALTH_PORT } from '../constructs/cell-runtime';
import {
  deployPlan,
  FargateService,
  OperatorTaskRole,
  operatorTask,
  type ServiceScaling,
} from '../constructs/fargate-service';
import { allow, allowEgress } from '../constructs/firewall';
import { putMetricData, type Statement } from '../constructs/iam';
import { InternalAlb } from '../constructs/internal-alb';
import { KAFKA_IAM_PORT, KafkaCluster } from '../constructs/kafka';
import { Network } from '../constructs/network';
import { PrivateName } from '../constructs/private-name';
import { RedisCache } from '../constructs/redis';
import { ReportingBucket } from '../constructs/reporting-bucket';
import { certificateFor, controlPlaneApiUrl, type Manifest } from '../manifest';
import { CONTROL_PLANE_PREFIX, cellPrefix, drPrefix, InternalName, StackName, secretSegment } from '../naming';
import { controlPlanePrewarmRole, prewarmStatements, prewarmTargets } from '../prewarm';
import {
  CONTROL_PLANE_ROLE_NAMES,
  CONTROL_PLANE_ROLES,
  type ControlPlaneRole,
  cellTopics,
  databaseUser,
  KEK_SECRETS,
  type ProcessRole,
} from '../roles';
import { OnsaleStack } from './onsale-stack';

export const CONTROL_PLANE_NAMESPACE = 'Onsale/ControlPlane';
const FACT_TOPIC_PARTITIONS = 3;

/** The reporting consumer's group for one source (a cell id, or the control plane's facts). */
function reportingGroup(source: string): string {
  return `${ReportingConfig.shape.REPORTING_GROUP_PREFIX.parse(undefined)}.${source}`;
}

/**
 * The control plane: event directory and cell registry (api), waiting room and release controller,
 * cross-cell reporting, and the edge router; its own Aurora and Redis, the reporting bucket and the
 * admission-token signing key.
 */
export class ControlPlaneStack extends OnsaleStack {
  readonly network: Network;
  readonly routerLoadBalancer: InternalAlb;
  /** The names the processes use for one another (src/naming.ts InternalName); each cell's VPC joins it. */
  readonly privateZone: Route53Zone;

  constructor(scope: Construct, manifest: Manifest) {
    const spec = manifest.controlPlane;
    super(scope, StackName.controlPlane, spec.region, { 'onsale:plane': 'control' });
    const { ctx } = this;
    const prefix = CONTROL_PLANE_PREFIX;

    const key = new KmsKey(this, 'key', {
      description: `${prefix}: database, cache, secrets and reporting at rest`,
      enableKeyRotation: true,
      deletionWindowInDays: 30,
    });
    checkovSkip(key, { CKV2_AWS_64: SkipReason.defaultKeyPolicy });
    new KmsAlias(this, 'key-alias', { name: `alias/${prefix}`, targetKeyId: key.keyId });

    // One NAT gateway: the control plane's only internet peer is the identity provider (README "Egress").
    this.network = new Network(this, 'network', { ctx, name: prefix, cidr: spec.cidr, egress: 'single-nat' });

    const database = new AuroraPostgres(this, 'database', {
      ctx,
      name: prefix,
      network: this.network,
      kmsKeyArn: key.arn,
      instanceClass: spec.database.instanceClass,
      readers: spec.database.readers,
      role: { kind: 'primary', global: false },
    });
    if (spec.backupCopyRegion && spec.backupCopyRegion !== spec.region) {
      new Backups(this, 'backups', {
        ctx,
        copy: this.regionContext('backup-copy', spec.backupCopyRegion),
        prefix,
        kmsKeyArn: key.arn,
        resourceArns: [database.cluster.arn],
        retentionDays: 35,
      });
    } else {
      checkovSkip(database.cluster, {
        CKV2_AWS_8:
          'the manifest sets no controlPlane.backupCopyRegion; Aurora keeps 35 days of point-in-time recovery in the region',
      });
    }
    const redisRoles = CONTROL_PLANE_ROLE_NAMES.filter((r) => (CONTROL_PLANE_ROLES[r] as ProcessRole).redis);
    const cache = new RedisCache(this, 'cache', {
      name: prefix,
      network: this.network,
      kmsKeyArn: key.arn,
      nodeType: spec.cache.nodeType,
      replicas: spec.cache.replicas,
      users: redisRoles,
    });
    const reporting = new ReportingBucket(this, 'reporting', {
      ctx,
      kmsKeyArn: key.arn,
      noncurrentVersionDays: spec.reporting.noncurrentVersionDays,
      infrequentAccessAfterDays: spec.reporting.infrequentAccessAfterDays,
    });

    const certificateArn = certificateFor(manifest, spec.region);
    // CloudFront reaches the router through a VPC origin. Its service security group only exists after the
    // origin is created, so the rule that can be declared up front is CloudFront's origin-facing prefix list.
    const cloudFront = new DataAwsEc2ManagedPrefixList(this, 'cloudfront-origin-facing', {
      name: 'com.amazonaws.global.cloudfront.origin-facing',
    });
    this.routerLoadBalancer = new InternalAlb(this, 'router-alb', {
      ctx,
      name: `${prefix}-router`,
      network: this.network,
      certificateArn,
      targetPort: CONTROL_PLANE_ROLES.router.http.port,
      healthPath: CONTROL_PLANE_ROLES.router.http.healthPath,
      clients: [{ id: 'cloudfront', source: { prefixListId: cloudFront.id } }],
    });
    // Keyed by cell id, never by position: removing one cell must not rewrite another cell's rules.
    const cellNetworks = manifest.cells.flatMap((cell) => [
      { id: `cell-${cell.id}`, cidrs: cell.dr ? [cell.cidr, cell.dr.cidr] : [cell.cidr] },
    ]);
    const apiLoadBalancer = new InternalAlb(this, 'api-alb', {
      ctx,
      name: `${prefix}-api`,
      network: this.network,
      certificateArn,
      targetPort: CONTROL_PLANE_ROLES.api.http.port,
      healthPath: CONTROL_PLANE_ROLES.api.http.healthPath,
      // Cells fetch the JWKS and report to the registry across their peering links.
      clients: cellNetworks.map(({ id, cidrs }) => ({ id, source: { cidrs } })),
    });

    const ecs = new EcsCluster(this, 'ecs', {
      name: prefix,
      setting: [{ name: 'containerInsights', value: 'enabled' }],
    });

    // Facts of the control plane (queue joined, buyers admitted) have their own cluster, like each cell's stream.
    const kafka = new KafkaCluster(this, 'kafka', {
      ctx,
      name: prefix,
      network: this.network,
      kmsKeyArn: key.arn,
      brokerType: 'kafka.m7g.large',
      brokers: 3,
      partitions: FACT_TOPIC_PARTITIONS,
      storageGiB: 500,
      replicationSource: false,
    });

    // One value per variable for every role that reads it: the api and the waiting room sign with the same
    // keys (one KEK) and call the cells with the same token. Each cell's CELL_INTERNAL_TOKEN holds that value.
    const sharedSecrets = new Map<string, string>();
    const secretFor = (envName: string) => {
      let secretArn = sharedSecrets.get(envName);
      if (!secretArn) {
        const secret = new SecretsmanagerSecret(this, `secret-${secretSegment(envName)}`, {
          name: `onsale/control-plane/${secretSegment(envName)}`,
          description: `${envName} of the control plane; the value is set by an operator`,
          kmsKeyId: key.arn,
          recoveryWindowInDays: 30,
        });
        checkovSkip(secret, { CKV2_AWS_57: SkipReason.operatorSecret });
        secretArn = secret.arn;
        sharedSecrets.set(envName, secretArn);
      }
      return secretArn;
    };

    const services = new Map<ControlPlaneRole, FargateService>();
    for (const roleName of CONTROL_PLANE_ROLE_NAMES) {
      const role: ProcessRole = CONTROL_PLANE_ROLES[roleName];
      // The router keeps no state: it reads the directory and the JWKS over HTTP from the control plane's API.
      const usesDatabase = roleName !== 'router';
      const user = databaseUser(`cp_${roleName}`);
      const environment: Record<string, string> = usesDatabase
        ? { DATABASE_URL_CONTROL_PLANE: database.proxyUrl(user), DATABASE_AUTH: 'iam', AWS_REGION: ctx.region }
        : {};
      const statements: Statement[] = usesDatabase ? [database.connectStatement(user)] : [];
      statements.push(putMetricData(CONTROL_PLANE_NAMESPACE));
      if (role.redis) {
        Object.assign(environment, {
          REDIS_URL: cache.url(roleName),
          REDIS_AUTH: 'iam',
          REDIS_CACHE_NAME: cache.name,
        });
        statements.push(cache.connectStatement(roleName));
      }
      if (role.http) {
        Object.assign(environment, { HOST: '0.0.0.0', PORT: String(role.http.port), TRUST_PROXY: 'true' });
      }
      // A worker answers /healthz, /readyz and /metrics on a port of its own, having no HTTP port. So does the router:
      // the internet reaches its HTTP port, and its metrics name every cell's request rates and error classes.
      const healthPort = !role.http || roleName === 'router' ? WORKER_HEALTH_PORT : undefined;
      if (healthPort !== undefined) environment.HEALTH_PORT = String(healthPort);
      // Promoters open the console through the edge: its sign-in redirect and Secure cookie follow from this.
      if (role.process === 'control-plane-api')
        environment.CONSOLE_PUBLIC_URL = `https://${manifest.edge.domainNames[0]}`;
      if (role.process === 'control-plane-api' || role.process === 'control-plane-worker') {
        Object.assign(environment, {
          IDENTITY_JWKS_URL: manifest.identity.jwksUrl,
          IDENTITY_ISSUER: manifest.identity.issuer,
          IDENTITY_AUDIENCE: manifest.identity.audience,
        });
      }
      if (roleName === 'router') {
        Object.assign(environment, {
          CONTROL_PLANE_URL: controlPlaneApiUrl(manifest),
          ADMISSION_JWKS_URL: `${controlPlaneApiUrl(manifest)}/.well-known/jwks.json`,
        });
      }
      // The worker schedules each onsale's capacity on the cells' and the control plane's scalable targets.
      if (role.process === 'control-plane-worker') {
        environment.PREWARM_TARGETS = JSON.stringify(prewarmTargets(manifest));
        statements.push(...prewarmStatements(ctx, manifest));
      }
      if (roleName === 'fact-relay' || roleName === 'reporting') {
        Object.assign(environment, { KAFKA_BROKERS: kafka.bootstrapBrokers, KAFKA_AUTH: 'aws-msk-iam' });
      }
      if (roleName === 'fact-relay') {
        environment.FACT_TOPIC_REPLICATION = String(TOPIC_REPLICATION_FACTOR);
        statements.push(
          ...kafka.grant({
            reads: [],
            writes: [CONTROL_PLANE_FACTS_TOPIC],
            creates: [CONTROL_PLANE_FACTS_TOPIC],
            idempotentProducer: true,
          }),
        );
      }
      if (roleName === 'reporting') {
        Object.assign(environment, { S3_BUCKET: reporting.bucket.bucket, S3_REGION: ctx.region });
        statements.push(
          ...reporting.writeStatements(),
          ...kafka.grant({
            reads: [CONTROL_PLANE_FACTS_TOPIC],
            writes: [],
            group: reportingGroup(CONTROL_PLANE_SOURCE),
            idempotentProducer: false,
          }),
          ...cellStreamReads(ctx, manifest),
        );
      }

      const loadBalancer = roleName === 'router' ? this.routerLoadBalancer : apiLoadBalancer;
      const scaling: ServiceScaling =
        role.scaling.kind === 'requests'
          ? {
              kind: 'requests',
              resourceLabel: loadBalancer.requestCountLabel,
              requestsPerTaskPerMinute: role.scaling.requestsPerTaskPerMinute,
            }
          : { kind: 'fixed' };

      const service = new FargateService(this, `service-${roleName}`, {
        ctx,
        prefix,
        role: roleName,
        process: role.process,
        cluster: ecs,
        network: this.network,
        image: roleName === 'router' ? manifest.images.router : manifest.images.controlPlane,
        sizing: spec.services[roleName],
        prewarmed: controlPlanePrewarmRole(roleName) !== undefined,
        environment,
        secrets: Object.fromEntries(role.secrets.map((envName) => [envName, secretFor(envName)])),
        secretsKeyArn: key.arn,
        taskStatements: statements,
        http: role.http ? { port: role.http.port, targetGroupArn: loadBalancer.targetGroup.arn } : undefined,
        healthPort,
        metricsNamespace: CONTROL_PLANE_NAMESPACE,
        scaling,
        standby: false,
      });
      services.set(roleName, service);

      if (usesDatabase) database.allowClient(roleName, service.securityGroup);
      if (role.redis) cache.allowClient(roleName, service.securityGroup);
      if (roleName === 'fact-relay' || roleName === 'reporting') kafka.allowClient(roleName, service.securityGroup);
      if (role.http) {
        allow(this, `alb-to-${roleName}`, {
          from: { group: loadBalancer.securityGroup },
          to: service.securityGroup,
          port: role.http.port,
          description: `ALB to ${roleName}`,
        });
      }
      if (roleName === 'reporting') {
        for (const { id, cidrs } of cellNetworks) {
          allowEgress(this, `reporting-to-${id}-kafka`, service.securityGroup, KAFKA_IAM_PORT, cidrs, `${id} MSK`);
        }
      }
    }

    // The deploy step before the services: migrations as the master user, creating the roles' IAM users.
    const masterSecretArn = database.masterSecretArn;
    if (!masterSecretArn) throw new Error('the control plane database has no master secret');
    // Deploy steps run as the master user: the migrations (creating the roles' IAM users), and a KEK rotation's
    // second step, sealing every admission signing key again under the new KEK (runbooks/rotate-keys.md).
    const deployTask = (
      name: string,
      process: 'control-plane-migrate' | 'control-plane-reseal-keys',
      o: {
        environment: Record<string, string>;
        secrets: Record<string, string>;
      },
    ) => {
      const task = new FargateService(this, `task-${name}`, {
        ctx,
        prefix,
        role: name,
        process,
        cluster: ecs,
        network: this.network,
        image: manifest.images.controlPlane,
        sizing: { min: 1, max: 1, cpu: 512, memory: 1024 },
        environment: {
          AWS_REGION: ctx.region,
          DATABASE_URL_CONTROL_PLANE: database.masterUrl(),
          DATABASE_AUTH: 'password',
          ...o.environment,
        },
        secrets: { DATABASE_PASSWORD: { arn: masterSecretArn, jsonKey: 'password' }, ...o.secrets },
        secretsKeyArn: key.arn,
        taskStatements: [],
        scaling: { kind: 'fixed' },
        standby: false,
        oneOff: true,
      });
      database.allowMigrations(task.securityGroup, name === 'migrate' ? 'migrations' : 'reseal-keys');
      return task;
    };
    const migrate = deployTask('migrate', 'control-plane-migrate', {
      environment: {
        DATABASE_ROLE_USERS: CONTROL_PLANE_ROLE_NAMES.filter((r) => r !== 'router')
          .map((r) => databaseUser(`cp_${r}`))
          .join(','),
      },
      secrets: {},
    });
    const resealKeys = deployTask('reseal-keys', 'control-plane-reseal-keys', {
      environment: {},
      secrets: Object.fromEntries(KEK_SECRETS.map((envName) => [envName, secretFor(envName)])),
    });
    new TerraformOutput(this, 'deploy_tasks', {
      value: { migrate: migrate.taskDefinition.arn, resealKeys: resealKeys.taskDefinition.arn },
    });
    // The deploy command's plan: migrations, then the services. The reseal is a KEK rotation's step, run by its
    // runbook (runbooks/rotate-keys.md), not by every deploy.
    new TerraformOutput(this, 'deploy', { value: deployPlan(ecs, this.network, [migrate, ...services.values()]) });

    // Evacuating an event (runbooks/evacuate-an-event.md) is the operator API's work done from a task: the same
    // database user, Redis user and secrets as the API, which carries moves forward itself; its own task role.
    const evacuate = new FargateService(this, 'task-evacuate-event', {
      ctx,
      prefix,
      role: OperatorTaskRole.evacuateEvent,
      process: 'control-plane-evacuate-event',
      cluster: ecs,
      network: this.network,
      image: manifest.images.controlPlane,
      sizing: { min: 1, max: 1, cpu: 512, memory: 1024 },
      environment: {
        AWS_REGION: ctx.region,
        DATABASE_URL_CONTROL_PLANE: database.proxyUrl(databaseUser('cp_api')),
        DATABASE_AUTH: 'iam',
        REDIS_URL: cache.url('api'),
        REDIS_AUTH: 'iam',
        REDIS_CACHE_NAME: cache.name,
        IDENTITY_JWKS_URL: manifest.identity.jwksUrl,
        IDENTITY_ISSUER: manifest.identity.issuer,
        IDENTITY_AUDIENCE: manifest.identity.audience,
      },
      secrets: Object.fromEntries(CONTROL_PLANE_ROLES.api.secrets.map((envName) => [envName, secretFor(envName)])),
      secretsKeyArn: key.arn,
      taskStatements: [database.connectStatement(databaseUser('cp_api')), cache.connectStatement('api')],
      scaling: { kind: 'fixed' },
      standby: false,
      oneOff: true,
    });
    database.allowClient(OperatorTaskRole.evacuateEvent, evacuate.securityGroup);
    cache.allowClient(OperatorTaskRole.evacuateEvent, evacuate.securityGroup);
    new TerraformOutput(this, 'operator_tasks', {
      value: { [OperatorTaskRole.evacuateEvent]: operatorTask(evacuate) },
    });
    // `aws ecs run-task --network-configuration` for the one-off tasks: these subnets, the task's own security group.
    new TerraformOutput(this, 'ecs_cluster', { value: ecs.name });
    new TerraformOutput(this, 'private_subnet_ids', { value: this.network.privateSubnetIds });

    const router = services.get('router');
    if (router) apiLoadBalancer.admit('router', { group: router.securityGroup });

    const alarms = new Alarms(this, 'alarms', prefix);
    alarms.metric('router-5xx', {
      description: 'The router is answering buyers with 5xx',
      namespace: 'AWS/ApplicationELB',
      dimensions: { LoadBalancer: this.routerLoadBalancer.lb.arnSuffix },
      metricName: 'HTTPCode_Target_5XX_Count',
      statistic: 'Sum',
      threshold: 50,
    });
    alarms.ratio('db-connections', {
      description: 'RDS Proxy pool of the control plane nearly exhausted',
      namespace: 'AWS/RDS',
      dimensions: { ProxyName: database.proxy.name, TargetGroup: 'default', TargetRole: 'READ_WRITE' },
      numerator: { metricName: 'DatabaseConnections', statistic: 'Maximum' },
      denominator: { metricName: 'MaxDatabaseConnectionsAllowed', statistic: 'Maximum' },
      threshold: 0.85,
    });
    alarms.metric('redis-memory', {
      description: 'Waiting-room Redis above 80% memory: queue positions are at risk of eviction',
      namespace: 'AWS/ElastiCache',
      dimensions: { ReplicationGroupId: cache.replicationGroup.replicationGroupId },
      metricName: 'DatabaseMemoryUsagePercentage',
      statistic: 'Maximum',
      threshold: 80,
    });

    this.privateZone = new Route53Zone(this, 'private-zone', {
      name: spec.internalDomain,
      comment: 'Names of the control plane API and the cell APIs, for the processes (never public)',
      vpc: [{ vpcId: this.network.vpc.id, vpcRegion: ctx.region }],
      forceDestroy: false,
      // The cells' VPCs join through their own aws_route53_zone_association, which this block must not undo.
      lifecycle: { ignoreChanges: ['vpc'] },
    });
    new PrivateName(this, 'api-name', {
      zoneId: this.privateZone.zoneId,
      name: InternalName.controlPlaneApi(spec.internalDomain),
      loadBalancer: apiLoadBalancer,
    });

    new TerraformOutput(this, 'api_url', { value: controlPlaneApiUrl(manifest) });
    new TerraformOutput(this, 'router_load_balancer', { value: this.routerLoadBalancer.lb.dnsName });
    new TerraformOutput(this, 'api_load_balancer', { value: apiLoadBalancer.lb.dnsName });
    new TerraformOutput(this, 'alarm_topic', { value: alarms.topic.arn });
    new TerraformOutput(this, 'database_master_secret', { value: database.masterSecretArn });
    new TerraformOutput(this, 'reporting_bucket', { value: reporting.bucket.bucket });
  }

  /** How a cell (or its DR standby), through a provider aliased to this region, peers with the control plane. */
  linkFor(ctx: AwsContext): ControlPlaneLink {
    return {
      peer: {
        ctx,
        vpcId: this.network.vpc.id,
        cidr: this.network.cidr,
        routeTableIds: this.network.privateRouteTableIds,
      },
      clientCidrs: this.network.privateSubnetCidrs,
    };
  }
}

/**
 * The reporting consumer reads each cell's purchase topic (and, after a failover, its DR copy). The cell
 * clusters' UUIDs are unknown here without a dependency on the cell stacks, so the ARNs wildcard only the
 * UUID segment: the cluster name, topic and group stay exact.
 */
function cellStreamReads(ctx: AwsContext, manifest: Manifest): Statement[] {
  const clusters = manifest.cells.flatMap((cell) => {
    const primary = { cell, cluster: cellPrefix(cell.id), region: cell.region };
    return cell.dr ? [primary, { cell, cluster: drPrefix(cell.id), region: cell.dr.region }] : [primary];
  });
  return [
    {
      sid: 'ConnectToCellClusters',
      actions: ['kafka-cluster:Connect', 'kafka-cluster:DescribeCluster'],
      resources: clusters.map(({ cluster, region }) => arn(ctx, 'kafka', `cluster/${cluster}/*`, region)),
    },
    {
      sid: 'ReadCellPurchaseTopics',
      actions: ['kafka-cluster:DescribeTopic', 'kafka-cluster:ReadData'],
      resources: clusters.map(({ cell, cluster, region }) =>
        arn(ctx, 'kafka', `topic/${cluster}/*/${cellTopics(cell.id).purchase}`, region),
      ),
    },
    {
      sid: 'OwnReportingGroups',
      actions: ['kafka-cluster:DescribeGroup', 'kafka-cluster:AlterGroup'],
      resources: clusters.map(({ cell, cluster, region }) =>
        arn(ctx, 'kafka', `group/${cluster}/*/${reportingGroup(cell.id)}`, region),
      ),
    },
  ];
}
