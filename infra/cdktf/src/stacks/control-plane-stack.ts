import { DataAwsEc2ManagedPrefixList } from '@cdktf/provider-aws/lib/data-aws-ec2-managed-prefix-list';
import { EcsCluster } from '@cdktf/provider-aws/lib/ecs-cluster';
import { KmsAlias } from '@cdktf/provider-aws/lib/kms-alias';
import { KmsKey } from '@cdktf/provider-aws/lib/kms-key';
import { SecretsmanagerSecret } from '@cdktf/provider-aws/lib/secretsmanager-secret';
import { TerraformOutput } from 'cdktf';
import type { Construct } from 'constructs';
import { type AwsContext, arn } from '../aws-context';
import { Alarms } from '../constructs/alarms';
import { AuroraPostgres } from '../constructs/aurora';
import type { ControlPlaneLink } from '../constructs/cell-runtime';
import { FargateService, type ServiceScaling } from '../constructs/fargate-service';
import { allow, allowEgress } from '../constructs/firewall';
import { putMetricData, type Statement } from '../constructs/iam';
import { InternalAlb } from '../constructs/internal-alb';
import { KAFKA_IAM_PORT } from '../constructs/kafka';
import { Network } from '../constructs/network';
import { RedisCache } from '../constructs/redis';
import { ReportingBucket } from '../constructs/reporting-bucket';
import { certificateFor, type Manifest } from '../manifest';
import { CELL_DIRECTORY_PATH, CONTROL_PLANE_PREFIX, cellPrefix, drPrefix, StackName, secretSegment } from '../naming';
import {
  CONTROL_PLANE_ROLE_NAMES,
  CONTROL_PLANE_ROLES,
  type ControlPlaneRole,
  cellTopics,
  consumerGroup,
  databaseUser,
  type ProcessRole,
} from '../roles';
import { OnsaleStack } from './onsale-stack';

export const CONTROL_PLANE_NAMESPACE = 'Onsale/ControlPlane';

/**
 * The control plane: event directory and cell registry (api), waiting room and release controller,
 * cross-cell reporting, and the edge router; its own Aurora and Redis, the reporting bucket and the
 * admission-token signing key.
 */
export class ControlPlaneStack extends OnsaleStack {
  readonly network: Network;
  readonly routerLoadBalancer: InternalAlb;

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
    new KmsAlias(this, 'key-alias', { name: `alias/${prefix}`, targetKeyId: key.keyId });

    // Asymmetric keys cannot rotate in place: rotation is a new key published in the JWKS beside this one.
    const signingKey = new KmsKey(this, 'admission-signing-key', {
      description: 'Signs admission tokens (ES256); cells and the router verify against the published JWKS',
      keyUsage: 'SIGN_VERIFY',
      customerMasterKeySpec: 'ECC_NIST_P256',
      deletionWindowInDays: 30,
    });
    new KmsAlias(this, 'admission-signing-key-alias', {
      name: 'alias/onsale/admission-signing',
      targetKeyId: signingKey.keyId,
    });

    this.network = new Network(this, 'network', { ctx, name: prefix, cidr: spec.cidr });

    const database = new AuroraPostgres(this, 'database', {
      ctx,
      name: prefix,
      network: this.network,
      kmsKeyArn: key.arn,
      instanceClass: spec.database.instanceClass,
      readers: spec.database.readers,
      role: { kind: 'primary', global: false },
    });
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
      name: `${prefix}-router`,
      network: this.network,
      certificateArn,
      targetPort: CONTROL_PLANE_ROLES.router.http.port,
      healthPath: CONTROL_PLANE_ROLES.router.http.healthPath,
      clients: [{ id: 'cloudfront', source: { prefixListId: cloudFront.id } }],
    });
    const cellNetworks = manifest.cells.flatMap((cell) => (cell.dr ? [cell.cidr, cell.dr.cidr] : [cell.cidr]));
    const apiLoadBalancer = new InternalAlb(this, 'api-alb', {
      name: `${prefix}-api`,
      network: this.network,
      certificateArn,
      targetPort: CONTROL_PLANE_ROLES.api.http.port,
      healthPath: CONTROL_PLANE_ROLES.api.http.healthPath,
      // Cells fetch the JWKS and report to the registry across their peering links.
      clients: [{ id: 'cells', source: { cidrs: cellNetworks } }],
    });

    const ecs = new EcsCluster(this, 'ecs', {
      name: prefix,
      setting: [{ name: 'containerInsights', value: 'enabled' }],
    });

    const services = new Map<ControlPlaneRole, FargateService>();
    for (const roleName of CONTROL_PLANE_ROLE_NAMES) {
      const role: ProcessRole = CONTROL_PLANE_ROLES[roleName];
      const user = databaseUser(`cp_${roleName}`);
      const environment: Record<string, string> = {
        DATABASE_HOST: database.proxy.endpoint,
        DATABASE_READ_HOST: database.readOnlyEndpoint.endpoint,
        DATABASE_PORT: String(database.port),
        DATABASE_NAME: database.database,
        DATABASE_USER: user,
        DATABASE_AUTH: 'iam',
        METRICS_NAMESPACE: CONTROL_PLANE_NAMESPACE,
        CELL_DIRECTORY_PATH,
      };
      const statements: Statement[] = [
        database.connectStatement(user),
        putMetricData(CONTROL_PLANE_NAMESPACE),
        {
          sid: 'ReadCellDirectory',
          actions: ['ssm:GetParametersByPath', 'ssm:GetParameter'],
          resources: [
            arn(ctx, 'ssm', `parameter${CELL_DIRECTORY_PATH}`),
            arn(ctx, 'ssm', `parameter${CELL_DIRECTORY_PATH}/*`),
          ],
        },
      ];
      if (role.redis) {
        environment.REDIS_URL = cache.url(roleName);
        statements.push(cache.connectStatement(roleName));
      }
      if (role.http) {
        environment.HOST = '0.0.0.0';
        environment.PORT = String(role.http.port);
      }
      if (roleName === 'api') {
        environment.ADMISSION_SIGNING_KEY_ARN = signingKey.arn;
        statements.push({
          sid: 'SignAdmissionTokens',
          actions: ['kms:Sign', 'kms:GetPublicKey', 'kms:DescribeKey'],
          resources: [signingKey.arn],
        });
      }
      if (roleName === 'reporting') {
        environment.REPORTING_BUCKET = reporting.bucket.bucket;
        environment.KAFKA_AUTH = 'aws-msk-iam';
        statements.push(...reporting.writeStatements(), ...cellStreamReads(ctx, manifest));
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
        cluster: ecs,
        network: this.network,
        image: roleName === 'router' ? manifest.images.router : manifest.images.controlPlane,
        sizing: spec.services[roleName],
        environment,
        secrets: Object.fromEntries(
          role.secrets.map((envName) => [
            envName,
            new SecretsmanagerSecret(this, `secret-${roleName}-${secretSegment(envName)}`, {
              name: `onsale/control-plane/${roleName}/${secretSegment(envName)}`,
              description: `${envName} for the control plane's ${roleName} tasks; the value is set by an operator`,
              kmsKeyId: key.arn,
              recoveryWindowInDays: 30,
            }).arn,
          ]),
        ),
        secretsKeyArn: key.arn,
        taskStatements: statements,
        http: role.http ? { port: role.http.port, targetGroupArn: loadBalancer.targetGroup.arn } : undefined,
        scaling,
        standby: false,
      });
      services.set(roleName, service);

      database.allowClient(roleName, service.securityGroup);
      if (role.redis) cache.allowClient(roleName, service.securityGroup);
      if (role.http) {
        allow(this, `alb-to-${roleName}`, {
          from: { group: loadBalancer.securityGroup },
          to: service.securityGroup,
          port: role.http.port,
          description: `ALB to ${roleName}`,
        });
      }
      if (roleName === 'reporting') {
        allowEgress(this, 'reporting-to-cell-kafka', service.securityGroup, KAFKA_IAM_PORT, cellNetworks, 'cells MSK');
      }
    }

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

    new TerraformOutput(this, 'router_load_balancer', { value: this.routerLoadBalancer.lb.dnsName });
    new TerraformOutput(this, 'api_load_balancer', { value: apiLoadBalancer.lb.dnsName });
    new TerraformOutput(this, 'alarm_topic', { value: alarms.topic.arn });
    new TerraformOutput(this, 'database_master_secret', { value: database.masterSecretArn });
    new TerraformOutput(this, 'reporting_bucket', { value: reporting.bucket.bucket });
    new TerraformOutput(this, 'admission_signing_key', { value: signingKey.arn });
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
        arn(ctx, 'kafka', `group/${cluster}/*/${consumerGroup(cell.id, 'reporting')}`, region),
      ),
    },
  ];
}
