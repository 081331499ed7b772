import { Route53Record } from '@cdktf/provider-aws/lib/route53-record';
import { Route53ZoneAssociation } from '@cdktf/provider-aws/lib/route53-zone-association';
import { Construct } from 'constructs';
import type { InternalAlb } from './internal-alb';
import type { Network } from './network';

export interface PrivateNameProps {
  /** The platform's private hosted zone (the control-plane stack's). */
  readonly zoneId: string;
  /** The name the other processes use, inside the zone. */
  readonly name: string;
  readonly loadBalancer: InternalAlb;
  /** This stack's VPC, which must resolve the zone's names too (the control plane's, cells', each other's). */
  readonly network?: { readonly network: Network; readonly region: string };
}

/**
 * A stack's load balancer under its name in the platform's private zone, and (for a cell's VPC) the zone's
 * association with the VPC, so the names resolve where the processes run.
 */
export class PrivateName extends Construct {
  readonly record: Route53Record;

  constructor(scope: Construct, id: string, props: PrivateNameProps) {
    super(scope, id);
    if (props.network) {
      new Route53ZoneAssociation(this, 'zone', {
        zoneId: props.zoneId,
        vpcId: props.network.network.vpc.id,
        vpcRegion: props.network.region,
      });
    }
    this.record = new Route53Record(this, 'record', {
      zoneId: props.zoneId,
      name: props.name,
      type: 'A',
      alias: {
        name: props.loadBalancer.lb.dnsName,
        zoneId: props.loadBalancer.lb.zoneId,
        evaluateTargetHealth: true,
      },
    });
  }
}
