import { Lb } from '@cdktf/provider-aws/lib/lb';
import { LbListener } from '@cdktf/provider-aws/lib/lb-listener';
import { LbTargetGroup } from '@cdktf/provider-aws/lib/lb-target-group';
import { SecurityGroup } from '@cdktf/provider-aws/lib/security-group';
import { LOAD_BALANCER_IDLE_SECONDS } from '@onsale/contracts/runtime/load-balancer';
import { Construct } from 'constructs';
import type { AwsContext } from '../aws-context';
import { AccessLogBucket } from './access-log-bucket';
import { allow, type Source } from './firewall';
import type { Network } from './network';

const HTTPS = 443;
/** How long ALB access logs are kept. */
const ACCESS_LOG_DAYS = 90;

export interface InternalAlbProps {
  readonly ctx: AwsContext;
  readonly name: string;
  readonly network: Network;
  readonly certificateArn: string;
  readonly targetPort: number;
  readonly healthPath: string;
  /** Everyone allowed to open a connection to the listener; nobody else can. */
  readonly clients: readonly { readonly id: string; readonly source: Source }[];
}

/** An internal HTTPS load balancer in the private subnets, forwarding to one service's tasks by IP. */
export class InternalAlb extends Construct {
  readonly lb: Lb;
  readonly targetGroup: LbTargetGroup;
  readonly securityGroup: SecurityGroup;
  readonly accessLogs: AccessLogBucket;

  constructor(scope: Construct, id: string, props: InternalAlbProps) {
    super(scope, id);
    const { name, network } = props;

    this.securityGroup = new SecurityGroup(this, 'sg', {
      name: `${name}-alb`,
      description: `Internal ALB ${name}`,
      vpcId: network.vpc.id,
    });
    for (const client of props.clients) this.admit(client.id, client.source);

    this.accessLogs = new AccessLogBucket(this, 'access-logs', {
      ctx: props.ctx,
      name,
      retentionDays: ACCESS_LOG_DAYS,
    });

    this.lb = new Lb(this, 'lb', {
      name,
      internal: true,
      loadBalancerType: 'application',
      subnets: network.privateSubnetIds,
      securityGroups: [this.securityGroup.id],
      dropInvalidHeaderFields: true,
      enableDeletionProtection: true,
      // The services keep idle connections longer than this (keepAliveBehindLoadBalancer): the ALB closes them, never a task.
      idleTimeout: LOAD_BALANCER_IDLE_SECONDS,
      accessLogs: { enabled: true, bucket: this.accessLogs.bucket.bucket, prefix: this.accessLogs.prefix },
    });

    this.targetGroup = new LbTargetGroup(this, 'targets', {
      name,
      targetType: 'ip',
      protocol: 'HTTP',
      port: props.targetPort,
      vpcId: network.vpc.id,
      // Long enough for in-flight holds to commit, short enough that a deploy does not stall an onsale.
      deregistrationDelay: '30',
      healthCheck: {
        path: props.healthPath,
        matcher: '200',
        interval: 10,
        timeout: 5,
        healthyThreshold: 2,
        unhealthyThreshold: 3,
      },
    });

    new LbListener(this, 'https', {
      loadBalancerArn: this.lb.arn,
      port: HTTPS,
      protocol: 'HTTPS',
      sslPolicy: 'ELBSecurityPolicy-TLS13-1-2-2021-06',
      certificateArn: props.certificateArn,
      defaultAction: [{ type: 'forward', targetGroupArn: this.targetGroup.arn }],
    });
  }

  admit(id: string, source: Source): void {
    allow(this, `from-${id}`, { from: source, to: this.securityGroup, port: HTTPS, description: id });
  }

  /** The ALBRequestCountPerTarget resource label: app/<lb>/<id>/targetgroup/<tg>/<id>. */
  get requestCountLabel(): string {
    return `${this.lb.arnSuffix}/${this.targetGroup.arnSuffix}`;
  }
}
