import type { SecurityGroup } from '@cdktf/provider-aws/lib/security-group';
import { VpcSecurityGroupEgressRule } from '@cdktf/provider-aws/lib/vpc-security-group-egress-rule';
import { VpcSecurityGroupIngressRule } from '@cdktf/provider-aws/lib/vpc-security-group-ingress-rule';
import type { Construct } from 'constructs';

export type Source =
  | { readonly group: SecurityGroup }
  | { readonly cidrs: readonly string[] }
  | { readonly prefixListId: string };

export interface Flow {
  readonly from: Source;
  readonly to: SecurityGroup;
  readonly port: number;
  readonly description: string;
}

/**
 * Opens one TCP port from a source into a group, as standalone rule resources (never inline rules, which
 * fight standalone ones). Between two groups the source's egress is opened too, so both ends say who talks.
 */
export function allow(scope: Construct, id: string, flow: Flow): void {
  const base = {
    ipProtocol: 'tcp',
    fromPort: flow.port,
    toPort: flow.port,
    description: flow.description,
  };
  const { from } = flow;
  if ('group' in from) {
    new VpcSecurityGroupIngressRule(scope, `${id}-in`, {
      ...base,
      securityGroupId: flow.to.id,
      referencedSecurityGroupId: from.group.id,
    });
    new VpcSecurityGroupEgressRule(scope, `${id}-out`, {
      ...base,
      securityGroupId: from.group.id,
      referencedSecurityGroupId: flow.to.id,
    });
  } else if ('cidrs' in from) {
    for (const cidr of from.cidrs) {
      new VpcSecurityGroupIngressRule(scope, `${id}-in-${cidrKey(cidr)}`, {
        ...base,
        securityGroupId: flow.to.id,
        cidrIpv4: cidr,
      });
    }
  } else {
    new VpcSecurityGroupIngressRule(scope, `${id}-in`, {
      ...base,
      securityGroupId: flow.to.id,
      prefixListId: from.prefixListId,
    });
  }
}

/** Egress to addresses outside the VPC's groups: AWS APIs through NAT, Stripe, peered networks. */
export function allowEgress(
  scope: Construct,
  id: string,
  group: SecurityGroup,
  port: number,
  cidrs: readonly string[],
  description: string,
): void {
  cidrs.forEach((cidr) => {
    new VpcSecurityGroupEgressRule(scope, `${id}-${cidrKey(cidr)}`, {
      securityGroupId: group.id,
      ipProtocol: 'tcp',
      fromPort: port,
      toPort: port,
      cidrIpv4: cidr,
      description,
    });
  });
}

/** Rules are named by what they allow, not by list position, so editing a list leaves the other rules alone. */
function cidrKey(cidr: string): string {
  return cidr.replaceAll(/[./]/g, '-');
}
