import { DbProxy } from '@cdktf/provider-aws/lib/db-proxy';
import { DbProxyDefaultTargetGroup } from '@cdktf/provider-aws/lib/db-proxy-default-target-group';
import { DbProxyEndpoint } from '@cdktf/provider-aws/lib/db-proxy-endpoint';
import { DbProxyTarget } from '@cdktf/provider-aws/lib/db-proxy-target';
import { DbSubnetGroup } from '@cdktf/provider-aws/lib/db-subnet-group';
import { RdsCluster, type RdsClusterConfig } from '@cdktf/provider-aws/lib/rds-cluster';
import { RdsClusterInstance } from '@cdktf/provider-aws/lib/rds-cluster-instance';
import { RdsClusterParameterGroup } from '@cdktf/provider-aws/lib/rds-cluster-parameter-group';
import { RdsGlobalCluster } from '@cdktf/provider-aws/lib/rds-global-cluster';
import { SecretsmanagerSecret } from '@cdktf/provider-aws/lib/secretsmanager-secret';
import { SecretsmanagerSecretVersion } from '@cdktf/provider-aws/lib/secretsmanager-secret-version';
import { SecurityGroup } from '@cdktf/provider-aws/lib/security-group';
import { Fn } from 'cdktf';
import { Construct } from 'constructs';
import { type AwsContext, arn } from '../aws-context';
import { checkovSkip } from '../checkov';
import { masterSecretName } from '../naming';
import { EphemeralRandomPassword } from './ephemeral-password';
import { allow } from './firewall';
import { ServiceRole, type Statement, sameAccountTrust } from './iam';
import type { Network } from './network';

const AURORA_ENGINE_VERSION = '16.8';
const PARAMETER_FAMILY = 'aurora-postgresql16';
const PORT = 5432;
const MASTER_USER = 'onsale_admin';
const DATABASE = 'onsale';

export type AuroraRole =
  /** `global` makes the cluster the primary of a global database that a DR region can follow. */
  | { readonly kind: 'primary'; readonly global: boolean }
  | { readonly kind: 'secondary'; readonly globalClusterIdentifier: string }
  /** A former secondary, detached from its global database by the failover runbook: the cell's writer now. */
  | { readonly kind: 'promoted' };

export interface AuroraProps {
  readonly ctx: AwsContext;
  readonly name: string;
  readonly network: Network;
  readonly kmsKeyArn: string;
  readonly instanceClass: string;
  readonly readers: number;
  readonly role: AuroraRole;
  /** Regions that keep a replica of the master secret (a DR region's migration task logs in with it). */
  readonly masterSecretReplicas?: readonly string[];
}

/**
 * Aurora PostgreSQL behind RDS Proxy. Clients and the proxy both authenticate with IAM (end-to-end IAM
 * auth), so no service holds a database password; the master credentials are for break-glass only.
 */
export class AuroraPostgres extends Construct {
  readonly cluster: RdsCluster;
  readonly proxy: DbProxy;
  readonly readOnlyEndpoint: DbProxyEndpoint;
  readonly proxySecurityGroup: SecurityGroup;
  private readonly dbSecurityGroup: SecurityGroup;
  readonly globalCluster?: RdsGlobalCluster;
  /** Absent on a global secondary, which inherits the primary's credentials. */
  readonly masterSecretArn?: string;
  readonly port = PORT;
  readonly database = DATABASE;
  private readonly ctx: AwsContext;

  constructor(scope: Construct, id: string, props: AuroraProps) {
    super(scope, id);
    const { ctx, name, network, role } = props;
    this.ctx = ctx;

    const dbSecurityGroup = new SecurityGroup(this, 'db-sg', {
      name: `${name}-aurora`,
      description: `Aurora ${name}: reachable only from its RDS Proxy and the migration task`,
      vpcId: network.vpc.id,
    });
    this.dbSecurityGroup = dbSecurityGroup;
    this.proxySecurityGroup = new SecurityGroup(this, 'proxy-sg', {
      name: `${name}-rds-proxy`,
      description: `RDS Proxy ${name}: reachable from the services granted a connection`,
      vpcId: network.vpc.id,
    });
    checkovSkip(this.proxySecurityGroup, {
      CKV2_AWS_5: "attached to the RDS proxy (vpc_security_group_ids), which checkov's graph does not follow",
    });
    allow(this, 'proxy-to-db', {
      from: { group: this.proxySecurityGroup },
      to: dbSecurityGroup,
      port: PORT,
      description: 'RDS Proxy to Aurora',
    });

    const subnets = new DbSubnetGroup(this, 'subnets', { name, subnetIds: network.privateSubnetIds });

    const parameters = new RdsClusterParameterGroup(this, 'parameters', {
      name,
      family: PARAMETER_FAMILY,
      description: `${name}: TLS only, lock waits, slow statements and DDL logged`,
      parameter: [
        { name: 'rds.force_ssl', value: '1' },
        // Lock waits are a release-controller signal; logging them makes a slow onsale explainable.
        { name: 'log_lock_waits', value: '1' },
        { name: 'log_min_duration_statement', value: '500' },
        // Every schema change is in the log, whoever ran it (the migrate task or an operator).
        { name: 'log_statement', value: 'ddl' },
        // A session that stalls inside a transaction keeps its seat locks; end it rather than queue buyers.
        { name: 'idle_in_transaction_session_timeout', value: '30000' },
      ],
    });

    const common: RdsClusterConfig = {
      clusterIdentifier: name,
      engine: 'aurora-postgresql',
      engineVersion: AURORA_ENGINE_VERSION,
      engineMode: 'provisioned',
      dbSubnetGroupName: subnets.name,
      vpcSecurityGroupIds: [dbSecurityGroup.id],
      dbClusterParameterGroupName: parameters.name,
      port: PORT,
      storageEncrypted: true,
      kmsKeyId: props.kmsKeyArn,
      iamDatabaseAuthenticationEnabled: true,
      backupRetentionPeriod: 35,
      preferredBackupWindow: '02:00-03:00',
      preferredMaintenanceWindow: 'tue:03:30-tue:04:30',
      copyTagsToSnapshot: true,
      deletionProtection: true,
      skipFinalSnapshot: false,
      finalSnapshotIdentifier: `${name}-final`,
      enabledCloudwatchLogsExports: ['postgresql'],
    };

    if (role.kind === 'secondary') {
      this.cluster = new RdsCluster(this, 'cluster', {
        ...common,
        globalClusterIdentifier: role.globalClusterIdentifier,
        // Set by AWS on a global secondary; Terraform must not try to undo it.
        lifecycle: { ignoreChanges: ['replication_source_identifier'] },
      });
    } else if (role.kind === 'promoted') {
      // The same cluster as the secondary's: the runbook detached it, and Terraform must not re-attach or rebuild it.
      this.cluster = new RdsCluster(this, 'cluster', {
        ...common,
        lifecycle: { ignoreChanges: ['global_cluster_identifier', 'replication_source_identifier'] },
      });
    } else if (role.global) {
      // A member of a global database cannot have its master password managed by RDS in Secrets Manager,
      // so the password is generated per run and written (write-only) to the cluster and to our own secret.
      const secret = new SecretsmanagerSecret(this, 'master-secret', {
        name: masterSecretName(name),
        description: `Break-glass master credentials of ${name}`,
        kmsKeyId: props.kmsKeyArn,
        recoveryWindowInDays: 30,
        replica: props.masterSecretReplicas?.map((region) => ({ region })),
      });
      checkovSkip(secret, {
        CKV2_AWS_57:
          'the break-glass password of a global-database member is written with write-only arguments; it is rotated by applying a new secret_string_wo_version, not by a rotation Lambda',
      });
      const password = new EphemeralRandomPassword(this, 'master-password', 40);
      new SecretsmanagerSecretVersion(this, 'master-secret-value', {
        secretId: secret.id,
        secretStringWo: Fn.jsonencode({ username: MASTER_USER, password: password.value }),
        secretStringWoVersion: 1,
      });
      this.cluster = new RdsCluster(this, 'cluster', {
        ...common,
        databaseName: DATABASE,
        masterUsername: MASTER_USER,
        masterPasswordWo: password.value,
        masterPasswordWoVersion: 1,
        // Joining the global database sets this; Terraform must not try to undo it.
        lifecycle: { ignoreChanges: ['global_cluster_identifier'] },
      });
      this.globalCluster = new RdsGlobalCluster(this, 'global', {
        globalClusterIdentifier: name,
        sourceDbClusterIdentifier: this.cluster.arn,
        deletionProtection: true,
      });
      this.masterSecretArn = secret.arn;
    } else {
      this.cluster = new RdsCluster(this, 'cluster', {
        ...common,
        databaseName: DATABASE,
        masterUsername: MASTER_USER,
        manageMasterUserPassword: true,
        masterUserSecretKmsKeyId: props.kmsKeyArn,
      });
      this.masterSecretArn = this.cluster.masterUserSecret.get(0).secretArn;
    }

    const monitoring = new ServiceRole(this, 'monitoring-role', {
      ctx,
      name: `${name}-rds-monitoring`,
      service: 'monitoring.rds.amazonaws.com',
      statements: [],
      managedPolicies: ['service-role/AmazonRDSEnhancedMonitoringRole'],
    });

    // One writer, the readers spread over the other AZs; all are failover targets, the first readers first.
    for (let i = 0; i <= props.readers; i++) {
      new RdsClusterInstance(this, `instance-${i}`, {
        identifier: `${name}-${i + 1}`,
        clusterIdentifier: this.cluster.id,
        engine: 'aurora-postgresql',
        engineVersion: AURORA_ENGINE_VERSION,
        instanceClass: props.instanceClass,
        availabilityZone: ctx.azs[i % ctx.azs.length],
        promotionTier: Math.min(i, 15),
        dbSubnetGroupName: subnets.name,
        publiclyAccessible: false,
        caCertIdentifier: 'rds-ca-rsa2048-g1',
        performanceInsightsEnabled: true,
        performanceInsightsKmsKeyId: props.kmsKeyArn,
        performanceInsightsRetentionPeriod: 7,
        monitoringInterval: 15,
        monitoringRoleArn: monitoring.role.arn,
        autoMinorVersionUpgrade: true,
        copyTagsToSnapshot: true,
      });
    }

    const proxyRole = new ServiceRole(this, 'proxy-role', {
      ctx,
      name: `${name}-rds-proxy`,
      service: 'rds.amazonaws.com',
      trustConditions: sameAccountTrust(ctx),
      statements: [
        {
          sid: 'ConnectAsApplicationUsers',
          actions: ['rds-db:connect'],
          resources: [arn(ctx, 'rds-db', `dbuser:${this.cluster.clusterResourceId}/onsale_*`)],
        },
      ],
    });

    this.proxy = new DbProxy(this, 'proxy', {
      name,
      engineFamily: 'POSTGRESQL',
      defaultAuthScheme: 'IAM_AUTH',
      requireTls: true,
      roleArn: proxyRole.role.arn,
      vpcSubnetIds: network.privateSubnetIds,
      vpcSecurityGroupIds: [this.proxySecurityGroup.id],
      idleClientTimeout: 1800,
    });
    new DbProxyDefaultTargetGroup(this, 'proxy-pool', {
      dbProxyName: this.proxy.name,
      connectionPoolConfig: {
        maxConnectionsPercent: 90,
        maxIdleConnectionsPercent: 20,
        // A buyer is better served by a fast refusal the waiting room can react to than a two-minute wait.
        connectionBorrowTimeout: 10,
      },
    });
    new DbProxyTarget(this, 'proxy-target', {
      dbProxyName: this.proxy.name,
      targetGroupName: 'default',
      dbClusterIdentifier: this.cluster.clusterIdentifier,
    });
    this.readOnlyEndpoint = new DbProxyEndpoint(this, 'proxy-readers', {
      dbProxyName: this.proxy.name,
      dbProxyEndpointName: `${name}-ro`,
      vpcSubnetIds: network.privateSubnetIds,
      vpcSecurityGroupIds: [this.proxySecurityGroup.id],
      targetRole: 'READ_ONLY',
    });
  }

  /** A client's connection URL through the proxy: no password, the client signs an IAM token for `user`. */
  proxyUrl(user: string): string {
    return `postgres://${user}@${this.proxy.endpoint}:${PORT}/${DATABASE}?sslmode=verify-full`;
  }

  /** The writer's URL as the master user, for the one-off migration task only (it creates the IAM users). */
  masterUrl(): string {
    return `postgres://${MASTER_USER}@${this.cluster.endpoint}:${PORT}/${DATABASE}?sslmode=verify-full`;
  }

  /** Opens the writer itself (not the proxy, which only takes IAM users) to a deploy task: the migrations, a key reseal. */
  allowMigrations(client: SecurityGroup, task: 'migrations' | 'reseal-keys' = 'migrations'): void {
    allow(this, task, {
      from: { group: client },
      to: this.dbSecurityGroup,
      port: PORT,
      description: task === 'migrations' ? 'migration task to the writer' : `${task} task to the writer`,
    });
  }

  /** Opens the proxy port to a client's security group. */
  allowClient(id: string, client: SecurityGroup): void {
    allow(this, `client-${id}`, {
      from: { group: client },
      to: this.proxySecurityGroup,
      port: PORT,
      description: `${id} to RDS Proxy`,
    });
  }

  /** IAM authentication through this proxy as one database user, and only that user. */
  connectStatement(databaseUser: string): Statement {
    // The proxy's IAM resource id is the last field of its ARN (arn:aws:rds:<region>:<account>:db-proxy:prx-...).
    const proxyResourceId = Fn.element(Fn.split(':', this.proxy.arn), 6);
    return {
      sid: 'ConnectThroughRdsProxy',
      actions: ['rds-db:connect'],
      resources: [arn(this.ctx, 'rds-db', `dbuser:${proxyResourceId}/${databaseUser}`)],
    };
  }
}
