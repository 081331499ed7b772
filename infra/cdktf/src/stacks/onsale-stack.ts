import { AwsProvider } from '@cdktf/provider-aws/lib/provider';
import { LocalBackend, TerraformStack } from 'cdktf';
import type { Construct } from 'constructs';
import { type AwsContext, AwsLookups } from '../aws-context';
import type { AwsRegion } from '../manifest';

/**
 * What every stack shares: a local backend, the AWS provider with the platform's tags, and the
 * account lookups. Terraform 1.11 (or OpenTofu 1.11) is the floor for ephemeral values and write-only
 * arguments.
 */
export abstract class OnsaleStack extends TerraformStack {
  protected readonly ctx: AwsContext;
  private readonly tags: Record<string, string>;

  constructor(scope: Construct, name: string, region: AwsRegion, tags: Record<string, string> = {}) {
    super(scope, name);
    this.tags = { 'onsale:stack': name, 'managed-by': 'cdktf', ...tags };
    // Every stack runs from cdktf.out/stacks/<name>, so one relative path reaches the shared state
    // directory both for a stack's own backend and for the remote-state reads of cross-stack references.
    new LocalBackend(this, { path: `../../../state/${name}.tfstate` });
    new AwsProvider(this, 'aws', { region, defaultTags: [{ tags: this.tags }] });
    this.ctx = new AwsLookups(this, 'lookups', region);
    this.addOverride('terraform.required_version', '>= 1.11');
  }

  /** A second provider, for the few resources a stack owns in another region. */
  protected regionContext(alias: string, region: AwsRegion): AwsContext {
    const provider = new AwsProvider(this, `aws-${alias}`, { alias, region, defaultTags: [{ tags: this.tags }] });
    return new AwsLookups(this, `lookups-${alias}`, region, provider);
  }
}
