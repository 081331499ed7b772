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

/** An AwsContext whose lookups become data sources only when something reads them. */
export class AwsLookups extends Construct implements AwsContext {
  private identity?: DataAwsCallerIdentity;
  private partitionLookup?: DataAwsPartition;
  private zones?: readonly [string, string, string];

  constructor(
    scope: Construct,
    id: string,
    readonly region: AwsRegion,
    readonly provider?: AwsProvider,
  ) {
    super(scope, id);
  }

  get account(): string {
    this.identity ??= new DataAwsCallerIdentity(this, 'identity', { provider: this.provider });
    return this.identity.accountId;
  }

  get partition(): string {
    this.partitionLookup ??= new DataAwsPartition(this, 'partition', { provider: this.provider });
    return this.partitionLookup.partition;
  }

  get azs(): readonly [string, string, string] {
    if (!this.zones) {
      const zones = new DataAwsAvailabilityZones(this, 'zones', {
        provider: this.provider,
        state: 'available',
        filter: [{ name: 'opt-in-status', values: ['opt-in-not-required'] }],
      });
      // checkov CKV_AWS_394 (zone identity not pinned) is suppressed in test/checkov.test.ts (DATA_SOURCE_SKIPS):
      // cdktf rewrites a data source's `//` property.
      this.zones = [Fn.element(zones.names, 0), Fn.element(zones.names, 1), Fn.element(zones.names, 2)];
    }
    return this.zones;
  }
}

export function arn(ctx: AwsContext, service: string, resource: string, region: string = ctx.region): string {
  return `arn:${ctx.partition}:${service}:${region}:${ctx.account}:${resource}`;
}
