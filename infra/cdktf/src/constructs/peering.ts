import { Route } from '@cdktf/provider-aws/lib/route';
import { VpcPeeringConnection } from '@cdktf/provider-aws/lib/vpc-peering-connection';
import { VpcPeeringConnectionAccepterA as VpcPeeringConnectionAccepter } from '@cdktf/provider-aws/lib/vpc-peering-connection-accepter';
import { Construct } from 'constructs';
import type { AwsContext } from '../aws-context';
import type { Network } from './network';

export interface PeerNetwork {
  /** A context whose provider is aliased to the peer's region. */
  readonly ctx: AwsContext;
  readonly vpcId: string;
  readonly cidr: string;
  readonly routeTableIds: readonly string[];
}

export interface PeeringProps {
  readonly name: string;
  readonly network: Network;
  readonly peer: PeerNetwork;
}

/**
 * Peers a cell's VPC with the control plane's (either side may be in another region) and routes the
 * private subnets of each to the other. Requested and accepted here, so the cell owns its own link.
 */
export class Peering extends Construct {
  constructor(scope: Construct, id: string, props: PeeringProps) {
    super(scope, id);
    const { network, peer } = props;

    const connection = new VpcPeeringConnection(this, 'connection', {
      vpcId: network.vpc.id,
      peerVpcId: peer.vpcId,
      peerRegion: peer.ctx.region,
      autoAccept: false,
      tags: { Name: props.name },
    });
    const accepter = new VpcPeeringConnectionAccepter(this, 'accepter', {
      provider: peer.ctx.provider,
      vpcPeeringConnectionId: connection.id,
      autoAccept: true,
      tags: { Name: props.name },
    });

    network.privateRouteTableIds.forEach((routeTableId, i) => {
      new Route(this, `to-peer-${i}`, {
        routeTableId,
        destinationCidrBlock: peer.cidr,
        vpcPeeringConnectionId: connection.id,
        dependsOn: [accepter],
      });
    });
    peer.routeTableIds.forEach((routeTableId, i) => {
      new Route(this, `from-peer-${i}`, {
        provider: peer.ctx.provider,
        routeTableId,
        destinationCidrBlock: network.cidr,
        vpcPeeringConnectionId: connection.id,
        dependsOn: [accepter],
      });
    });
  }
}
