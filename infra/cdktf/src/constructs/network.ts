import { CloudwatchLogGroup } from '@cdktf/provider-aws/lib/cloudwatch-log-group';
import { DefaultSecurityGroup } from '@cdktf/provider-aws/lib/default-security-group';
import { Eip } from '@cdktf/provider-aws/lib/eip';
import { FlowLog } from '@cdktf/provider-aws/lib/flow-log';
import { InternetGateway } from '@cdktf/provider-aws/lib/internet-gateway';
import { NatGateway } from '@cdktf/provider-aws/lib/nat-gateway';
import { Route } from '@cdktf/provider-aws/lib/route';
import { RouteTable } from '@cdktf/provider-aws/lib/route-table';
import { RouteTableAssociation } from '@cdktf/provider-aws/lib/route-table-association';
import { SecurityGroup } from '@cdktf/provider-aws/lib/security-group';
import { Subnet } from '@cdktf/provider-aws/lib/subnet';
import { Vpc } from '@cdktf/provider-aws/lib/vpc';
import { VpcEndpoint } from '@cdktf/provider-aws/lib/vpc-endpoint';
import { Construct } from 'constructs';
import type { AwsContext } from '../aws-context';
import { checkovSkip, SkipReason } from '../checkov';
import { subnet } from '../cidr';
import { allow } from './firewall';
import { ServiceRole, sameAccountTrust } from './iam';

/**
 * How a VPC's private subnets reach the internet (the egress design, infra/cdktf/README.md "Egress"):
 * - `nat-per-az`: a NAT gateway (and its Elastic IP) in each AZ, so losing an AZ never takes another AZ's
 *   egress with it. Cells: Stripe is on the purchase path.
 * - `single-nat`: one NAT gateway in the first AZ for the internet, and interface endpoints in every AZ for
 *   the AWS APIs a task needs to start and run (ECR, CloudWatch Logs, Secrets Manager), so tasks still start
 *   and log in the other AZs while the NAT's AZ is out. The control plane: its only internet peer is the
 *   identity provider's JWKS, which the processes cache. It costs one Elastic IP instead of three, which is
 *   what lets the control plane and a cell share a region within the default quota of five.
 */
export type Egress = 'nat-per-az' | 'single-nat';

export interface NetworkProps {
  readonly ctx: AwsContext;
  readonly name: string;
  readonly cidr: string;
  readonly egress: Egress;
}

const AZ_COUNT = 3;

/** What an ECS Fargate task calls before and while it runs, besides S3 (the gateway endpoint). */
const TASK_INTERFACE_ENDPOINTS = ['ecr.api', 'ecr.dkr', 'logs', 'secretsmanager'] as const;

/**
 * A VPC over three AZs. Workloads live in the private subnets (three quarters of the range); the public
 * subnets hold only the NAT gateways (one per AZ, or one, see `Egress`).
 */
export class Network extends Construct {
  readonly vpc: Vpc;
  readonly cidr: string;
  readonly privateSubnetIds: string[];
  readonly privateSubnetCidrs: string[];
  readonly privateRouteTableIds: string[];

  constructor(scope: Construct, id: string, props: NetworkProps) {
    super(scope, id);
    const { ctx, name } = props;
    this.cidr = props.cidr;

    this.vpc = new Vpc(this, 'vpc', {
      cidrBlock: props.cidr,
      enableDnsHostnames: true,
      enableDnsSupport: true,
      tags: { Name: name },
    });

    // Strip the default group's allow-all rules so nothing can be placed in it by accident.
    new DefaultSecurityGroup(this, 'default-sg', { vpcId: this.vpc.id, tags: { Name: `${name}-default-unused` } });

    const igw = new InternetGateway(this, 'igw', { vpcId: this.vpc.id, tags: { Name: name } });
    const publicRoutes = new RouteTable(this, 'public-rt', { vpcId: this.vpc.id, tags: { Name: `${name}-public` } });
    new Route(this, 'public-default', {
      routeTableId: publicRoutes.id,
      destinationCidrBlock: '0.0.0.0/0',
      gatewayId: igw.id,
    });

    const publicBlock = subnet(props.cidr, 2, 3);
    this.privateSubnetIds = [];
    this.privateSubnetCidrs = [];
    this.privateRouteTableIds = [];

    const nats: NatGateway[] = [];
    for (let az = 0; az < AZ_COUNT; az++) {
      const zone = ctx.azs[az];
      const publicSubnet = new Subnet(this, `public-${az}`, {
        vpcId: this.vpc.id,
        availabilityZone: zone,
        cidrBlock: subnet(publicBlock, 2, az),
        mapPublicIpOnLaunch: false,
        tags: { Name: `${name}-public-${az}`, 'onsale:tier': 'public' },
      });
      new RouteTableAssociation(this, `public-${az}-rt`, { subnetId: publicSubnet.id, routeTableId: publicRoutes.id });

      if (props.egress === 'nat-per-az' || az === 0) {
        const eip = new Eip(this, `nat-${az}-ip`, { domain: 'vpc', tags: { Name: `${name}-nat-${az}` } });
        nats.push(
          new NatGateway(this, `nat-${az}`, {
            allocationId: eip.allocationId,
            subnetId: publicSubnet.id,
            tags: { Name: `${name}-${az}` },
            dependsOn: [igw],
          }),
        );
      }
      const nat = nats[az] ?? nats[0];
      if (!nat) throw new Error(`${name}: no NAT gateway for AZ ${az}`);

      const privateCidr = subnet(props.cidr, 2, az);
      const privateSubnet = new Subnet(this, `private-${az}`, {
        vpcId: this.vpc.id,
        availabilityZone: zone,
        cidrBlock: privateCidr,
        mapPublicIpOnLaunch: false,
        tags: { Name: `${name}-private-${az}`, 'onsale:tier': 'private' },
      });
      const routes = new RouteTable(this, `private-${az}-rt`, {
        vpcId: this.vpc.id,
        tags: { Name: `${name}-private-${az}` },
      });
      new Route(this, `private-${az}-default`, {
        routeTableId: routes.id,
        destinationCidrBlock: '0.0.0.0/0',
        natGatewayId: nat.id,
      });
      new RouteTableAssociation(this, `private-${az}-assoc`, { subnetId: privateSubnet.id, routeTableId: routes.id });

      this.privateSubnetIds.push(privateSubnet.id);
      this.privateSubnetCidrs.push(privateCidr);
      this.privateRouteTableIds.push(routes.id);
    }

    // Image layers and reporting objects travel through the free gateway endpoint instead of paid NAT.
    new VpcEndpoint(this, 's3', {
      vpcId: this.vpc.id,
      serviceName: `com.amazonaws.${ctx.region}.s3`,
      vpcEndpointType: 'Gateway',
      routeTableIds: this.privateRouteTableIds,
      tags: { Name: `${name}-s3` },
    });
    if (props.egress === 'single-nat') this.taskEndpoints(ctx, name);

    const flowLogs = new CloudwatchLogGroup(this, 'flow-logs', {
      name: `/${name}/vpc-flow-logs`,
      retentionInDays: 90,
    });
    checkovSkip(flowLogs, { CKV_AWS_158: SkipReason.logGroupKms, CKV_AWS_338: SkipReason.logRetention });
    const flowLogRole = new ServiceRole(this, 'flow-log-role', {
      ctx,
      name: `${name}-vpc-flow-logs`,
      service: 'vpc-flow-logs.amazonaws.com',
      trustConditions: sameAccountTrust(ctx),
      statements: [
        {
          actions: ['logs:CreateLogStream', 'logs:PutLogEvents', 'logs:DescribeLogStreams'],
          resources: [flowLogs.arn, `${flowLogs.arn}:log-stream:*`],
        },
      ],
    });
    new FlowLog(this, 'flow-log', {
      vpcId: this.vpc.id,
      // Rejected flows are the evidence of a security-group mistake; logging every accepted packet of an
      // onsale would cost more than it tells.
      trafficType: 'REJECT',
      logDestinationType: 'cloud-watch-logs',
      logDestination: flowLogs.arn,
      iamRoleArn: flowLogRole.role.arn,
      maxAggregationInterval: 60,
    });
  }

  /** Interface endpoints with private DNS, so the SDKs and the ECS agent reach these APIs without the NAT. */
  private taskEndpoints(ctx: AwsContext, name: string): void {
    const group = new SecurityGroup(this, 'endpoints-sg', {
      name: `${name}-endpoints`,
      description: `AWS API interface endpoints of ${name}`,
      vpcId: this.vpc.id,
    });
    allow(this, 'tasks-to-endpoints', {
      from: { cidrs: this.privateSubnetCidrs },
      to: group,
      port: 443,
      description: 'HTTPS from the private subnets to AWS APIs',
    });
    for (const service of TASK_INTERFACE_ENDPOINTS) {
      new VpcEndpoint(this, `endpoint-${service.replace('.', '-')}`, {
        vpcId: this.vpc.id,
        serviceName: `com.amazonaws.${ctx.region}.${service}`,
        vpcEndpointType: 'Interface',
        privateDnsEnabled: true,
        subnetIds: this.privateSubnetIds,
        securityGroupIds: [group.id],
        tags: { Name: `${name}-${service}` },
      });
    }
  }
}
