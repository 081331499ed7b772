import { CloudwatchLogGroup } from '@cdktf/provider-aws/lib/cloudwatch-log-group';
import { MskCluster } from '@cdktf/provider-aws/lib/msk-cluster';
import { MskConfiguration } from '@cdktf/provider-aws/lib/msk-configuration';
import { SecurityGroup } from '@cdktf/provider-aws/lib/security-group';
import { Construct } from 'constructs';
import { type AwsContext, arn } from '../aws-context';
import { checkovSkip, SkipReason } from '../checkov';
import { allow } from './firewall';
import type { Statement } from './iam';
import type { Network } from './network';

const KAFKA_VERSION = '3.9.x';
/** Brokers' SASL/IAM listener inside the VPC. */
export const KAFKA_IAM_PORT = 9098;

export interface KafkaProps {
  readonly ctx: AwsContext;
  readonly name: string;
  readonly network: Network;
  readonly kmsKeyArn: string;
  readonly brokerType: string;
  readonly brokers: number;
  readonly partitions: number;
  readonly storageGiB: number;
  /** Multi-VPC private connectivity, which cross-region MSK Replicator needs on its source cluster. */
  readonly replicationSource: boolean;
}

export interface KafkaGrant {
  readonly reads: readonly string[];
  readonly writes: readonly string[];
  readonly group?: string;
  /** A prefix of consumer groups whose committed offsets the client reads. */
  readonly describeGroups?: string;
  /** Topics whose metadata and end offsets the client reads, without reading their messages. */
  readonly describeTopics?: readonly string[];
  /** Topics the client creates (the deploy step that provisions them). */
  readonly creates?: readonly string[];
  readonly idempotentProducer: boolean;
}

/**
 * An MSK cluster with IAM authentication only, TLS everywhere and KMS at rest. Topics are never
 * auto-created: a topic with a default partition count or replication factor is an incident in waiting.
 */
export class KafkaCluster extends Construct {
  readonly cluster: MskCluster;
  readonly securityGroup: SecurityGroup;
  readonly clusterName: string;
  private readonly ctx: AwsContext;

  constructor(scope: Construct, id: string, props: KafkaProps) {
    super(scope, id);
    const { ctx, name, network } = props;
    this.ctx = ctx;
    this.clusterName = name;

    this.securityGroup = new SecurityGroup(this, 'sg', {
      name: `${name}-msk`,
      description: `MSK ${name}: brokers, and MSK Replicator which joins this group`,
      vpcId: network.vpc.id,
    });
    allow(this, 'self', {
      from: { group: this.securityGroup },
      to: this.securityGroup,
      port: KAFKA_IAM_PORT,
      description: 'brokers and replicator within the group',
    });

    const configuration = new MskConfiguration(this, 'configuration', {
      name,
      kafkaVersions: [KAFKA_VERSION],
      description: `${name}: explicit topics, RF 3, min ISR 2, no unclean elections`,
      serverProperties: [
        'auto.create.topics.enable=false',
        'default.replication.factor=3',
        'min.insync.replicas=2',
        'unclean.leader.election.enable=false',
        `num.partitions=${props.partitions}`,
        'offsets.topic.replication.factor=3',
        'transaction.state.log.replication.factor=3',
        'transaction.state.log.min.isr=2',
      ].join('\n'),
    });

    const brokerLogs = new CloudwatchLogGroup(this, 'broker-logs', {
      name: `/${name}/msk-brokers`,
      retentionInDays: 30,
    });
    checkovSkip(brokerLogs, { CKV_AWS_158: SkipReason.logGroupKms, CKV_AWS_338: SkipReason.logRetention });

    this.cluster = new MskCluster(this, 'cluster', {
      clusterName: name,
      kafkaVersion: KAFKA_VERSION,
      numberOfBrokerNodes: props.brokers,
      brokerNodeGroupInfo: {
        instanceType: props.brokerType,
        clientSubnets: network.privateSubnetIds,
        securityGroups: [this.securityGroup.id],
        storageInfo: { ebsStorageInfo: { volumeSize: props.storageGiB } },
        connectivityInfo: props.replicationSource
          ? { vpcConnectivity: { clientAuthentication: { sasl: { iam: true } } } }
          : undefined,
      },
      clientAuthentication: { sasl: { iam: true }, unauthenticated: false },
      encryptionInfo: {
        encryptionAtRestKmsKeyArn: props.kmsKeyArn,
        encryptionInTransit: { clientBroker: 'TLS', inCluster: true },
      },
      configurationInfo: { arn: configuration.arn, revision: configuration.latestRevision },
      // Per-partition metrics are what the consumer-lag alarms and autoscaling read.
      enhancedMonitoring: 'PER_TOPIC_PER_PARTITION',
      loggingInfo: { brokerLogs: { cloudwatchLogs: { enabled: true, logGroup: brokerLogs.name } } },
    });
  }

  get bootstrapBrokers(): string {
    return this.cluster.bootstrapBrokersSaslIam;
  }

  /** `name` may end in `*` to match a prefix, which is how IAM scopes topic and group resources. */
  topicArn(name: string): string {
    return arn(this.ctx, 'kafka', `topic/${this.clusterName}/${this.cluster.clusterUuid}/${name}`);
  }

  groupArn(name: string): string {
    return arn(this.ctx, 'kafka', `group/${this.clusterName}/${this.cluster.clusterUuid}/${name}`);
  }

  allowClient(id: string, client: SecurityGroup): void {
    allow(this, `client-${id}`, {
      from: { group: client },
      to: this.securityGroup,
      port: KAFKA_IAM_PORT,
      description: `${id} to MSK`,
    });
  }

  allowCidrs(id: string, cidrs: readonly string[]): void {
    allow(this, `cidrs-${id}`, { from: { cidrs }, to: this.securityGroup, port: KAFKA_IAM_PORT, description: id });
  }

  /** Exactly the topics and the group a client uses, on this cluster only. */
  grant(access: KafkaGrant): Statement[] {
    const statements: Statement[] = [
      {
        sid: 'KafkaConnect',
        actions: [
          'kafka-cluster:Connect',
          'kafka-cluster:DescribeCluster',
          ...(access.idempotentProducer ? ['kafka-cluster:WriteDataIdempotently'] : []),
        ],
        resources: [this.cluster.arn],
      },
    ];
    if (access.reads.length > 0) {
      statements.push({
        sid: 'KafkaRead',
        actions: ['kafka-cluster:DescribeTopic', 'kafka-cluster:ReadData'],
        resources: access.reads.map((t) => this.topicArn(t)),
      });
    }
    if (access.writes.length > 0) {
      statements.push({
        sid: 'KafkaWrite',
        actions: ['kafka-cluster:DescribeTopic', 'kafka-cluster:WriteData'],
        resources: access.writes.map((t) => this.topicArn(t)),
      });
    }
    if (access.creates && access.creates.length > 0) {
      statements.push({
        sid: 'KafkaCreateTopics',
        actions: ['kafka-cluster:DescribeTopic', 'kafka-cluster:CreateTopic'],
        resources: access.creates.map((t) => this.topicArn(t)),
      });
    }
    if (access.describeTopics && access.describeTopics.length > 0) {
      // Metadata and ListOffsets (kafkajs' fetchTopicOffsets), and the topic side of OffsetFetch.
      statements.push({
        sid: 'KafkaDescribeTopics',
        actions: ['kafka-cluster:DescribeTopic'],
        resources: access.describeTopics.map((t) => this.topicArn(t)),
      });
    }
    if (access.describeGroups) {
      // FindCoordinator and OffsetFetch (kafkajs' fetchOffsets) on the group.
      statements.push({
        sid: 'KafkaDescribeGroups',
        actions: ['kafka-cluster:DescribeGroup'],
        resources: [this.groupArn(`${access.describeGroups}*`)],
      });
    }
    if (access.group) {
      statements.push({
        sid: 'KafkaConsumerGroup',
        actions: ['kafka-cluster:DescribeGroup', 'kafka-cluster:AlterGroup'],
        resources: [this.groupArn(access.group)],
      });
    }
    return statements;
  }
}
