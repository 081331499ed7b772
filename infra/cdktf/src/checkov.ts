import type { TerraformElement } from 'cdktf';

const written = new WeakMap<TerraformElement, string[]>();

/**
 * A checkov suppression on one resource, with its reason, in the synthesized JSON itself (`"//": { "checkov": [...] }`, beside cdktf's
 * own metadata): Terraform ignores `//` comment properties. checkov 3.3's terraform_json runner does not apply inline skips, so
 * test/checkov.test.ts reads them: a finding passes only if its resource carries `checkov:skip=<ID>:<reason>`.
 */
export function checkovSkip(resource: TerraformElement, skips: Record<string, string>): void {
  const entries = written.get(resource) ?? [];
  for (const [id, reason] of Object.entries(skips)) entries.push(`checkov:skip=${id}:${reason}`);
  written.set(resource, entries);
  resource.addOverride('//.checkov', [...entries]);
}

/** Reasons shared by every resource of a kind, written once. */
export const SkipReason = {
  logGroupKms:
    'CloudWatch Logs encrypts every group at rest with AWS-owned keys; the logs carry ids, never tokens or card data (headers redacted). A stack-key policy for the logs service is future work (infra README)',
  logRetention:
    'data minimisation and cost: each group keeps 30 to 90 days, chosen per log; these are operational logs with no year-long retention duty',
  defaultKeyPolicy:
    "the default key policy (the account root, delegating to IAM) is intended: every use is granted by one role's IAM policy naming this key",
  operatorSecret:
    'the value is set by an operator from a third party (Stripe keys, webhook secret) or is a signing key the application rotates itself; a rotation Lambda cannot produce it',
} as const;
