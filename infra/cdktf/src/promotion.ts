import { type Block, providerConfigs, providerOf, type StackJson } from './synthesized';

/**
 * What a DR promotion must take out of the standby's state before `terraform apply`: every resource and data
 * source of the standby whose provider configuration the promoted stack no longer declares (the primary
 * region's alias). Terraform cannot plan them without that provider ("Provider configuration not present"),
 * and must not call it: the primary region may be out. `terraform state rm` forgets them without a provider
 * (runbooks/region-failover.md step 4); the objects stay in the primary region, which is rebuilt anyway.
 */
export function promotionOrphans(standby: StackJson, promoted: StackJson): string[] {
  const providers = providerConfigs(promoted);
  const orphans: string[] = [];
  const visit = (kind: 'resource' | 'data', blocks: Record<string, Record<string, Block>> | undefined) => {
    for (const [type, byName] of Object.entries(blocks ?? {})) {
      for (const [name, body] of Object.entries(byName)) {
        const provider = providerOf(type, body);
        // `terraform` (terraform_remote_state) is built into Terraform and OpenTofu: it never disappears.
        if (provider === 'terraform' || providers.has(provider)) continue;
        orphans.push(kind === 'data' ? `data.${type}.${name}` : `${type}.${name}`);
      }
    }
  };
  visit('resource', standby.resource);
  visit('data', standby.data);
  return orphans.sort();
}
