import { DataAwsAvailabilityZones } from '@cdktf/provider-aws/lib/data-aws-availability-zones';
import { DataAwsCallerIdentity } from '@cdktf/provider-aws/lib/data-aws-caller-identity';
import { DataAwsPartition } from '@cdktf/provider-aws/lib/data-aws-partition';
import type { AwsProvider } from '@cdktf/provider-aws/lib/provider';
import { Fn } from 'cdktf';
import { Construct } from 'constructs';
import type { AwsRegion } from './manifest';

/** Where a construct's resources land: the account and partition are only known at plan time. */
export interface AwsContext {
  readonly region: AwsRegion;
  readonly account: string;
  readonly partition: string;
  /** Three AZs, the first three the account may use without opting in (no Local Zones). */
  readonly azs: readonly [string, string, string];
  /** Unset for a stack's default provider; set for an aliased one. */
  readonly provider?: AwsProvider;
}

export class AwsLookups extends Construct {
  readonly context: AwsContext;

  constructor(scope: Construct, id: string, region: AwsRegion, provider?: AwsProvider) {
    super(scope, id);
    const identity = new DataAwsCallerIdentity(this, 'identity', { provider });
    const partition = new DataAwsPartition(this, 'partition', { provider });
    const zones = new DataAwsAvailabilityZones(this, 'zones', {
      provider,
      state: 'available',
      filter: [{ name: 'opt-in-status', values: ['opt-in-not-required'] }],
    });
    this.context = {
      region,
      account: identity.accountId,
      partition: partition.partition,
      azs: [0, 1, 2].map((i) => Fn.element(zones.names, i)) as unknown as [string, string, string],
      provider,
    };
  }
}

export function arn(ctx: AwsContext, service: string, resource: string, region: string = ctx.region): string {
  return `arn:${ctx.partition}:${service}:${region}:${ctx.account}:${resource}`;
}
