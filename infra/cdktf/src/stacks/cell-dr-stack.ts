import { DataAwsIamPolicyDocument } from '@cdktf/provider-aws/lib/data-aws-iam-policy-document';
import { DataAwsSecretsmanagerSecret } from '@cdktf/provider-aws/lib/data-aws-secretsmanager-secret';
import { MskClusterPolicy } from '@cdktf/provider-aws/lib/msk-cluster-policy';
import { MskReplicator } from '@cdktf/provider-aws/lib/msk-replicator';
import { Fn, TerraformOutput } from 'cdktf';
import type { Construct } from 'constructs';
import { arn } from '../aws-context';
import { checkovSkip } from '../checkov';
import { CellRuntime, type RoleSecrets } from '../constructs/cell-runtime';
import { ServiceRole, sameAccountTrust } from '../constructs/iam';
import { PrivateName } from '../constructs/private-name';
import { cellApiUrl, cellImage, cellMailSender, certificateFor, controlPlaneApiUrl, type Manifest } from '../manifest';
import {
  cellPrefix,
  cellSecretName,
  drPrefix,
  InternalName,
  masterSecretName,
  StackName,
  secretSegment,
} from '../naming';
import { CELL_ROLE_NAMES, CELL_ROLES, cellGroupPrefix, cellStreamPrefix, type ProcessRole } from '../roles';
import type { CellStack } from './cell-stack';
import type { ControlPlaneStack } from './control-plane-stack';
import { OnsaleStack } from './onsale-stack';
import { cellRunTaskOutputs } from './run-task-outputs';

/** Replication lag (ms) past which the DR copy stops being a failover target that loses little. */
const DATABASE_LAG_ALARM_MS = 5_000;
const TOPIC_LAG_ALARM_MS = 60_000;

/**
 * The warm secondary of one cell in its DR region: an Aurora global-database secondary, an MSK cluster
 * fed by MSK Replicator (topics and consumer-group offsets, same topic names), and the cell's services
 * defined but scaled to zero, ready for the failover runbook to start under a new epoch.
 */
export class CellDrStack extends OnsaleStack {
  readonly runtime: CellRuntime;

  constructor(scope: Construct, manifest: Manifest, primary: CellStack, controlPlane: ControlPlaneStack) {
    const { cell } = primary;
    const dr = cell.dr;
    if (!dr) throw new Error(`cell ${cell.id} has no dr entry`);
    super(scope, StackName.dr(cell.id), dr.region, { 'onsale:cell': cell.id, 'onsale:dr': 'true' });
    const { ctx } = this;
    const prefix = drPrefix(cell.id);
    const controlPlaneRegion = this.regionContext('control-plane', manifest.controlPlane.region);
    const common = {
      ctx,
      prefix,
      cell,
      cidr: dr.cidr,
      image: cellImage(manifest, cell),
      certificateArn: certificateFor(manifest, dr.region),
      controlPlane: controlPlane.linkFor(controlPlaneRegion),
      identity: manifest.identity,
      ticketKeys: manifest.ticketKeys,
      controlPlaneApiUrl: controlPlaneApiUrl(manifest),
      // The same sender as the primary's, verified in this region too: SES identities are regional.
      mail: cellMailSender(manifest, cell.id),
    };

    if (dr.promoted) {
      // Nothing here may refer to the primary region or its stack: this applies while that region is out.
      // Replicas keep their primary's names, so the DR region's own Secrets Manager finds them.
      const byName = (id: string, name: string) => new DataAwsSecretsmanagerSecret(this, id, { name }).arn;
      const secrets: RoleSecrets = Object.fromEntries(
        CELL_ROLE_NAMES.map((role) => [
          role,
          Object.fromEntries(
            (CELL_ROLES[role] as ProcessRole).secrets.map((envName) => [
              envName,
              byName(`secret-${role}-${secretSegment(envName)}`, cellSecretName(cell.id, role, envName)),
            ]),
          ),
        ]),
      );
      this.runtime = new CellRuntime(this, 'cell', {
        ...common,
        mode: {
          kind: 'promoted',
          secrets,
          masterSecretArn: byName('master-secret', masterSecretName(cellPrefix(cell.id))),
        },
        epoch: dr.promoted.epoch,
      });
    } else {
      this.runtime = new CellRuntime(this, 'cell', {
        ...common,
        mode: { kind: 'standby', globalClusterIdentifier: globalClusterOf(primary), secrets: replicaSecrets(primary) },
        // The standby runs no task; a promotion is a manifest change that sets its epoch.
        epoch: cell.epoch,
      });
      this.replicate(primary);
    }

    // The standby's API under its own name: a region failover points the cell's registry entry at it.
    new PrivateName(this, 'api-name', {
      zoneId: controlPlane.privateZone.zoneId,
      name: InternalName.standbyCellApi(manifest.controlPlane.internalDomain, cell.id),
      loadBalancer: this.runtime.apiLoadBalancer,
      network: { network: this.runtime.network, region: dr.region },
    });
    new TerraformOutput(this, 'api_url', { value: cellApiUrl(manifest, cell.id, true) });
    new TerraformOutput(this, 'api_load_balancer', { value: this.runtime.apiLoadBalancer.lb.dnsName });
    // What the registry's entry takes at a failover (runbooks/region-failover.md step 8), as the cell stack's does.
    new TerraformOutput(this, 'kafka_bootstrap_brokers', { value: this.runtime.kafka.bootstrapBrokers });
    new TerraformOutput(this, 'alarm_topic', { value: this.runtime.alarms.topic.arn });
    checkovSkip(this.runtime.database.cluster, {
      CKV2_AWS_8:
        "the standby is the cross-region copy of the cell; once promoted it keeps Aurora's 35 days of point-in-time recovery",
    });
    new TerraformOutput(this, 'database_cluster', { value: this.runtime.database.cluster.clusterIdentifier });
    new TerraformOutput(this, 'deploy_tasks', { value: this.runtime.oneOffTasks });
    // A standby's plan has no task and every service at 0; a promoted one's is a primary's (runbooks/deploy-cell.md).
    new TerraformOutput(this, 'deploy', { value: this.runtime.deployPlan });
    cellRunTaskOutputs(this, this.runtime);
  }

  /** The standby's feeds from the primary: MSK Replicator (topics and group offsets) and lag alarms. */
  private replicate(primary: CellStack): void {
    const { ctx } = this;
    const { cell } = primary;
    const prefix = drPrefix(cell.id);
    const source = primary.runtime;
    // Cross-region MSK Replicator reaches the source through multi-VPC connectivity, which the source
    // cluster's resource policy must grant to the MSK service.
    const primaryRegion = this.regionContext('primary', cell.region);
    const sourceCluster = source.kafka.cluster;
    const sourcePolicy = new DataAwsIamPolicyDocument(this, 'source-cluster-policy', {
      provider: primaryRegion.provider,
      statement: [
        {
          sid: 'MskReplicatorToDr',
          effect: 'Allow',
          principals: [{ type: 'Service', identifiers: ['kafka.amazonaws.com'] }],
          actions: ['kafka:CreateVpcConnection', 'kafka:GetBootstrapBrokers', 'kafka:DescribeClusterV2'],
          resources: [sourceCluster.arn],
          condition: [{ test: 'StringEquals', variable: 'aws:SourceAccount', values: [ctx.account] }],
        },
      ],
    });
    new MskClusterPolicy(this, 'source-cluster-access', {
      provider: primaryRegion.provider,
      clusterArn: sourceCluster.arn,
      policy: sourcePolicy.json,
    });

    const target = this.runtime.kafka;
    const streams = cellStreamPrefix(cell.id);
    const groups = cellGroupPrefix(cell.id);
    const replicatorRole = new ServiceRole(this, 'replicator-role', {
      ctx,
      name: `${prefix}-msk-replicator`,
      service: 'kafka.amazonaws.com',
      trustConditions: sameAccountTrust(ctx),
      statements: [
        {
          sid: 'ReadSourceCluster',
          actions: ['kafka-cluster:Connect', 'kafka-cluster:DescribeCluster'],
          resources: [sourceCluster.arn],
        },
        {
          sid: 'ReadSourceTopics',
          actions: [
            'kafka-cluster:DescribeTopic',
            'kafka-cluster:ReadData',
            'kafka-cluster:DescribeTopicDynamicConfiguration',
          ],
          resources: [
            arn(primaryRegion, 'kafka', `topic/${source.kafka.clusterName}/${sourceCluster.clusterUuid}/${streams}*`),
          ],
        },
        {
          sid: 'ReadSourceGroupOffsets',
          actions: ['kafka-cluster:DescribeGroup'],
          resources: [
            arn(primaryRegion, 'kafka', `group/${source.kafka.clusterName}/${sourceCluster.clusterUuid}/${groups}*`),
          ],
        },
        {
          sid: 'WriteTargetCluster',
          actions: ['kafka-cluster:Connect', 'kafka-cluster:DescribeCluster', 'kafka-cluster:AlterCluster'],
          resources: [target.cluster.arn],
        },
        {
          // The target cluster exists only for this cell, and the replicator keeps its own internal topics there.
          sid: 'WriteTargetTopics',
          actions: [
            'kafka-cluster:DescribeTopic',
            'kafka-cluster:CreateTopic',
            'kafka-cluster:AlterTopic',
            'kafka-cluster:WriteData',
            'kafka-cluster:ReadData',
            'kafka-cluster:DescribeTopicDynamicConfiguration',
            'kafka-cluster:AlterTopicDynamicConfiguration',
          ],
          resources: [target.topicArn('*')],
        },
        {
          sid: 'WriteTargetGroupOffsets',
          actions: ['kafka-cluster:DescribeGroup', 'kafka-cluster:AlterGroup'],
          resources: [target.groupArn('*')],
        },
      ],
    });

    // Java-style regular expressions over topic and group names.
    const pattern = (start: string) => `${start.replaceAll('.', '\\.')}.*`;
    const replicator = new MskReplicator(this, 'replicator', {
      replicatorName: prefix,
      description: `Cell ${cell.id}: ${cell.region} to ${ctx.region}, topics and consumer offsets`,
      serviceExecutionRoleArn: replicatorRole.role.arn,
      kafkaCluster: [
        {
          amazonMskCluster: { mskClusterArn: sourceCluster.arn },
          vpcConfig: { subnetIds: source.network.privateSubnetIds },
        },
        {
          amazonMskCluster: { mskClusterArn: target.cluster.arn },
          vpcConfig: { subnetIds: this.runtime.network.privateSubnetIds, securityGroupsIds: [target.securityGroup.id] },
        },
      ],
      replicationInfoList: {
        sourceKafkaClusterArn: sourceCluster.arn,
        targetKafkaClusterArn: target.cluster.arn,
        targetCompressionType: 'LZ4',
        topicReplication: [
          {
            topicsToReplicate: [pattern(streams)],
            // Identical names: after a failover the services use the same topics and the replicated offsets.
            topicNameConfiguration: { type: 'IDENTICAL' },
            copyTopicConfigurations: true,
            copyAccessControlListsForTopics: false,
            detectAndCopyNewTopics: true,
            startingPosition: { type: 'EARLIEST' },
          },
        ],
        consumerGroupReplication: [
          {
            consumerGroupsToReplicate: [pattern(groups)],
            synchroniseConsumerGroupOffsets: true,
            detectAndCopyNewConsumerGroups: true,
          },
        ],
      },
    });

    const alarms = this.runtime.alarms;
    alarms.metric('database-replication-lag', {
      description: `Aurora global replication from ${cell.region} is more than ${DATABASE_LAG_ALARM_MS / 1000} s behind`,
      namespace: 'AWS/RDS',
      dimensions: { DBClusterIdentifier: this.runtime.database.cluster.clusterIdentifier },
      metricName: 'AuroraGlobalDBReplicationLag',
      statistic: 'Maximum',
      threshold: DATABASE_LAG_ALARM_MS,
    });
    alarms.metric('topic-replication-lag', {
      description: `MSK Replicator is more than ${TOPIC_LAG_ALARM_MS / 1000} s behind ${cell.region}`,
      namespace: 'AWS/Kafka',
      dimensions: { ReplicatorName: replicator.replicatorName },
      metricName: 'ReplicationLatency',
      statistic: 'Maximum',
      threshold: TOPIC_LAG_ALARM_MS,
    });

    new TerraformOutput(this, 'replicator_arn', { value: replicator.arn });
  }
}

function globalClusterOf(primary: CellStack): string {
  const globalCluster = primary.runtime.database.globalCluster;
  if (!globalCluster) throw new Error(`cell ${primary.cell.id} declares dr but its database is not global`);
  return globalCluster.globalClusterIdentifier;
}

/** Secrets Manager replicas keep the primary's ARN apart from the region. */
function replicaSecrets(primary: CellStack): RoleSecrets {
  const { cell } = primary;
  const drRegion = cell.dr?.region ?? cell.region;
  return Object.fromEntries(
    Object.entries(primary.runtime.secrets).map(([role, byEnv]) => [
      role,
      Object.fromEntries(
        Object.entries(byEnv ?? {}).map(([envName, secretArn]) => [
          envName,
          Fn.replace(secretArn, `:${cell.region}:`, `:${drRegion}:`),
        ]),
      ),
    ]),
  );
}
