import { ElasticacheReplicationGroup } from '@cdktf/provider-aws/lib/elasticache-replication-group';
import { ElasticacheSubnetGroup } from '@cdktf/provider-aws/lib/elasticache-subnet-group';
import { ElasticacheUser } from '@cdktf/provider-aws/lib/elasticache-user';
import { ElasticacheUserGroup } from '@cdktf/provider-aws/lib/elasticache-user-group';
import { SecurityGroup } from '@cdktf/provider-aws/lib/security-group';
import { Construct } from 'constructs';
import { allow } from './firewall';
import type { Statement } from './iam';
import type { Network } from './network';

const PORT = 6379;

export interface RedisProps {
  readonly name: string;
  readonly network: Network;
  readonly kmsKeyArn: string;
  readonly nodeType: string;
  readonly replicas: number;
  /** One IAM-authenticated Redis user per process role. */
  readonly users: readonly string[];
}

/**
 * A Multi-AZ Redis replication group with automatic failover, TLS required and KMS at rest. Clients log in
 * with IAM (no shared AUTH token to rotate); each role is its own Redis user that cannot run admin commands.
 */
export class RedisCache extends Construct {
  readonly replicationGroup: ElasticacheReplicationGroup;
  readonly securityGroup: SecurityGroup;
  /** The replication group id, which an IAM token names. */
  readonly name: string;
  private readonly users = new Map<string, ElasticacheUser>();

  constructor(scope: Construct, id: string, props: RedisProps) {
    super(scope, id);
    const { name, network } = props;
    this.name = name;

    this.securityGroup = new SecurityGroup(this, 'sg', {
      name: `${name}-redis`,
      description: `ElastiCache ${name}: reachable from the roles granted a connection`,
      vpcId: network.vpc.id,
    });
    const subnets = new ElasticacheSubnetGroup(this, 'subnets', { name, subnetIds: network.privateSubnetIds });

    // A user group must contain a user named "default"; this one is switched off.
    const defaultUser = new ElasticacheUser(this, 'default-user', {
      userId: `${name}-default`,
      userName: 'default',
      engine: 'redis',
      accessString: 'off -@all',
      authenticationMode: { type: 'no-password-required' },
    });
    for (const role of props.users) {
      // IAM authentication requires the user id and the user name to be equal.
      const userId = `${name}-${role}`;
      this.users.set(
        role,
        new ElasticacheUser(this, `user-${role}`, {
          userId,
          userName: userId,
          engine: 'redis',
          accessString: 'on ~* &* +@all -@dangerous',
          authenticationMode: { type: 'iam' },
        }),
      );
    }
    const userGroup = new ElasticacheUserGroup(this, 'users', {
      userGroupId: name,
      engine: 'redis',
      userIds: [defaultUser.userId, ...[...this.users.values()].map((u) => u.userId)],
    });

    this.replicationGroup = new ElasticacheReplicationGroup(this, 'group', {
      replicationGroupId: name,
      description: `${name}: Multi-AZ, TLS, IAM users`,
      engine: 'redis',
      engineVersion: '7.1',
      parameterGroupName: 'default.redis7',
      nodeType: props.nodeType,
      port: PORT,
      numNodeGroups: 1,
      replicasPerNodeGroup: props.replicas,
      automaticFailoverEnabled: true,
      multiAzEnabled: true,
      atRestEncryptionEnabled: 'true',
      kmsKeyId: props.kmsKeyArn,
      transitEncryptionEnabled: true,
      transitEncryptionMode: 'required',
      userGroupIds: [userGroup.userGroupId],
      subnetGroupName: subnets.name,
      securityGroupIds: [this.securityGroup.id],
      snapshotRetentionLimit: 7,
      snapshotWindow: '03:00-04:00',
      maintenanceWindow: 'wed:04:30-wed:05:30',
      autoMinorVersionUpgrade: 'true',
    });
  }

  /** rediss:// (TLS); the user name is the role's IAM-authenticated Redis user. */
  url(role: string): string {
    return `rediss://${this.user(role).userName}@${this.replicationGroup.primaryEndpointAddress}:${PORT}`;
  }

  allowClient(id: string, client: SecurityGroup): void {
    allow(this, `client-${id}`, {
      from: { group: client },
      to: this.securityGroup,
      port: PORT,
      description: `${id} to Redis`,
    });
  }

  connectStatement(role: string): Statement {
    return {
      sid: 'RedisIamConnect',
      actions: ['elasticache:Connect'],
      resources: [this.replicationGroup.arn, this.user(role).arn],
    };
  }

  private user(role: string): ElasticacheUser {
    const user = this.users.get(role);
    if (!user) throw new Error(`no Redis user for role ${role}; list it in the cache's users`);
    return user;
  }
}
