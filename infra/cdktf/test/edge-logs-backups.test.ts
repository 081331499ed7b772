import { AwsProvider } from '@cdktf/provider-aws/lib/provider';
import { Testing } from 'cdktf';
import { beforeAll, describe, expect, it } from 'vitest';
import { AwsLookups } from '../src/aws-context';
import { Backups } from '../src/constructs/backups';
import { InternalAlb } from '../src/constructs/internal-alb';
import { Network } from '../src/constructs/network';
import { parseManifest } from '../src/manifest';
import { STRIPE_WEBHOOK_IPS, STRIPE_WEBHOOK_PATH_REGEX } from '../src/stripe';
import { defaultManifest } from './support/manifests';
import { type Block, resources, type Synthesized, stack, synthPlatform, synthScope } from './support/terraform';

const STRIPE_PATH = new RegExp(STRIPE_WEBHOOK_PATH_REGEX);

describe('the edge exempts Stripe webhook deliveries from the per-IP limits', () => {
  let synth: Synthesized;
  beforeAll(() => {
    synth = synthPlatform(defaultManifest());
  });

  it("keeps Stripe's documented webhook addresses in an IP set", () => {
    const { text } = stack(synth, 'edge');
    expect(
      Testing.toHaveResourceWithProperties(text, 'aws_wafv2_ip_set', {
        scope: 'CLOUDFRONT',
        ip_address_version: 'IPV4',
        addresses: STRIPE_WEBHOOK_IPS.map((ip) => `${ip}/32`),
      }),
    ).toBe(true);
  });

  it('scopes both rate rules down to everything but a Stripe address on a cell webhook path', () => {
    const { json } = stack(synth, 'edge');
    const [acl] = resources(json, 'aws_wafv2_web_acl');
    const rules = ((acl?.body.rule ?? []) as Block[]).filter((r) => (r.statement as Block).rate_based_statement);
    expect(rules.map((r) => r.name).sort()).toEqual(['post-rate-per-ip', 'rate-per-ip']);
    for (const rule of rules) {
      const text = JSON.stringify((rule.statement as Block).rate_based_statement);
      // The exemption is a NOT over (Stripe's IP set AND the webhook path), inside the scope-down.
      expect(text, String(rule.name)).toMatch(/"not_statement":\{"statement":\[\{"and_statement"/);
      expect(text).toContain('aws_wafv2_ip_set.stripe-webhook-ips.arn');
      expect(text).toContain(JSON.stringify(STRIPE_WEBHOOK_PATH_REGEX));
      expect(text).toContain('"uri_path":{}');
    }
    const post = rules.find((r) => r.name === 'post-rate-per-ip') as Block;
    expect(JSON.stringify(post.statement)).toContain('"search_string":"POST"');
  });

  it("answers the router's /metrics with 404 at the edge, in any spelling, before any other rule", () => {
    const { json } = stack(synth, 'edge');
    const [acl] = resources(json, 'aws_wafv2_web_acl');
    const rules = (acl?.body.rule ?? []) as Block[];
    const rule = rules.find((r) => r.name === 'operator-paths') as Block;
    expect(rule.priority).toBe(Math.min(...rules.map((r) => Number(r.priority))));
    expect(new Set(rules.map((r) => r.priority)).size).toBe(rules.length);
    expect(rule.action).toEqual({ block: { custom_response: { response_code: 404 } } });
    expect((rule.statement as Block).byte_match_statement).toEqual({
      field_to_match: { uri_path: {} },
      positional_constraint: 'EXACTLY',
      search_string: '/metrics',
      text_transformation: [
        { priority: 0, type: 'URL_DECODE' },
        { priority: 1, type: 'LOWERCASE' },
      ],
    });
  });

  it('caches availability documents and the catalog at the edge as long as their origin says, keyed by path alone', () => {
    const { json } = stack(synth, 'edge');
    const policies = new Map(resources(json, 'aws_cloudfront_cache_policy').map((p) => [p.name, p.body]));
    // Availability within seconds; the catalog (a seat map changes only on an upload) within an hour.
    expect(policies.get('availability-cache')).toMatchObject({ min_ttl: 0, default_ttl: 0, max_ttl: 5 });
    expect(policies.get('catalog-cache')).toMatchObject({ min_ttl: 0, default_ttl: 0, max_ttl: 3600 });
    for (const policy of policies.values())
      expect(policy.parameters_in_cache_key_and_forwarded_to_origin as Block).toMatchObject({
        cookies_config: { cookie_behavior: 'none' },
        headers_config: { header_behavior: 'none' },
        query_strings_config: { query_string_behavior: 'none' },
      });
    const [distribution] = resources(json, 'aws_cloudfront_distribution');
    if (!distribution) throw new Error('no distribution in the edge stack');
    const behaviors = distribution.body.ordered_cache_behavior as Block[];
    for (const [path, policy] of [
      ['/events/*/availability*', 'availability-cache'],
      ['/events/*/catalog*', 'catalog-cache'],
    ]) {
      const behavior = behaviors.find((b) => b.path_pattern === path);
      expect(behavior, path).toMatchObject({ allowed_methods: ['GET', 'HEAD'], cached_methods: ['GET', 'HEAD'] });
      expect(String(behavior?.cache_policy_id)).toContain(`aws_cloudfront_cache_policy.${policy}.id`);
    }
    // Everything else (holds, orders, the waiting room) stays uncached.
    expect((distribution.body.default_cache_behavior as Block).cache_policy_id).toBe(
      '4135ea2d-6df8-44a3-9df3-4b5a84be39ad',
    );
  });

  it("matches the router's webhook paths and nothing else", () => {
    expect(STRIPE_PATH.test('/cells/c1/webhooks/stripe')).toBe(true);
    expect(STRIPE_PATH.test('/cells/eu-2/webhooks/stripe')).toBe(true);
    expect(STRIPE_PATH.test('/cells/c1/holds')).toBe(false);
    expect(STRIPE_PATH.test('/cells/c1/x/webhooks/stripe')).toBe(false);
    expect(STRIPE_PATH.test('/webhooks/stripe')).toBe(false);
  });

  it('logs every load balancer of every stack to its own private bucket', () => {
    for (const { name, json } of synth.stacks.values()) {
      for (const { body: lb } of resources(json, 'aws_lb')) {
        const logs = lb.access_logs as Block;
        expect(logs, `${name}/${String(lb.name)}`).toMatchObject({ enabled: true, prefix: 'alb' });
        expect(String(logs.bucket)).toMatch(/^\$\{aws_s3_bucket\..+\.bucket\}$/);
      }
    }
  });

  it('backs up each cell without DR with a cross-region copy, and leaves cells with DR to their standby', () => {
    const manifest = parseManifest(defaultManifest());
    for (const cell of manifest.cells) {
      const { json } = stack(synth, `cell-${cell.id}`);
      expect(resources(json, 'aws_backup_plan'), cell.id).toHaveLength(cell.dr ? 0 : 1);
    }
  });
});

describe('constructs', () => {
  it('gives an internal ALB an access-log bucket that ELB may write to, encrypted, private and expiring', () => {
    const synthesized = synthScope((scope) => {
      new AwsProvider(scope, 'aws', { region: 'eu-west-1' });
      const ctx = new AwsLookups(scope, 'ctx', 'eu-west-1');
      const network = new Network(scope, 'network', { ctx, name: 'test', cidr: '10.40.0.0/16', egress: 'nat-per-az' });
      new InternalAlb(scope, 'alb', {
        ctx,
        name: 'test-api',
        network,
        certificateArn: 'arn:aws:acm:eu-west-1:123456789012:certificate/test',
        targetPort: 8080,
        healthPath: '/readyz',
        clients: [],
      });
    });
    expect(
      Testing.toHaveResourceWithProperties(synthesized, 'aws_lb', {
        access_logs: { enabled: true, prefix: 'alb' },
      }),
    ).toBe(true);
    expect(
      Testing.toHaveResourceWithProperties(synthesized, 'aws_s3_bucket_public_access_block', {
        block_public_acls: true,
        block_public_policy: true,
        ignore_public_acls: true,
        restrict_public_buckets: true,
      }),
    ).toBe(true);
    expect(
      Testing.toHaveResourceWithProperties(synthesized, 'aws_s3_bucket_server_side_encryption_configuration', {
        rule: [{ apply_server_side_encryption_by_default: { sse_algorithm: 'AES256' } }],
      }),
    ).toBe(true);
    expect(
      Testing.toHaveResourceWithProperties(synthesized, 'aws_s3_bucket_lifecycle_configuration', {
        rule: [{ expiration: [{ days: 90 }] }],
      }),
    ).toBe(true);
    expect(Testing.toHaveDataSourceWithProperties(synthesized, 'aws_elb_service_account', {})).toBe(true);
    const policy = JSON.stringify(JSON.parse(synthesized).data.aws_iam_policy_document);
    expect(policy).toContain('logdelivery.elasticloadbalancing.amazonaws.com');
    expect(policy).toContain('aws:SecureTransport');
  });

  it('snapshots a database daily into a KMS vault and copies each snapshot to a vault in another region', () => {
    const synthesized = synthScope((scope) => {
      new AwsProvider(scope, 'aws', { region: 'us-east-2' });
      const copyProvider = new AwsProvider(scope, 'aws-copy', { alias: 'copy', region: 'eu-west-1' });
      new Backups(scope, 'backups', {
        ctx: new AwsLookups(scope, 'ctx', 'us-east-2'),
        copy: new AwsLookups(scope, 'ctx-copy', 'eu-west-1', copyProvider),
        prefix: 'onsale-c2',
        kmsKeyArn: 'arn:aws:kms:us-east-2:123456789012:key/test',
        resourceArns: ['arn:aws:rds:us-east-2:123456789012:cluster:onsale-c2'],
        retentionDays: 35,
      });
    });
    expect(
      Testing.toHaveResourceWithProperties(synthesized, 'aws_backup_vault', {
        name: 'onsale-c2-backups',
        kms_key_arn: 'arn:aws:kms:us-east-2:123456789012:key/test',
      }),
    ).toBe(true);
    expect(
      Testing.toHaveResourceWithProperties(synthesized, 'aws_backup_vault', {
        name: 'onsale-c2-backups-copy',
        provider: 'aws.copy',
      }),
    ).toBe(true);
    expect(
      Testing.toHaveResourceWithProperties(synthesized, 'aws_backup_plan', {
        rule: [
          {
            schedule: 'cron(0 3 * * ? *)',
            lifecycle: { delete_after: 35 },
            copy_action: [{ lifecycle: { delete_after: 35 } }],
          },
        ],
      }),
    ).toBe(true);
    const plan = Object.values(JSON.parse(synthesized).resource.aws_backup_plan)[0] as { rule: Block[] };
    expect(JSON.stringify(plan.rule[0]?.copy_action)).toMatch(/aws_backup_vault\.backups_copy-vault_[^.]+\.arn/);
    expect(
      Testing.toHaveResourceWithProperties(synthesized, 'aws_backup_selection', {
        resources: ['arn:aws:rds:us-east-2:123456789012:cluster:onsale-c2'],
      }),
    ).toBe(true);
    expect(
      Testing.toHaveResourceWithProperties(synthesized, 'aws_kms_key', {
        provider: 'aws.copy',
        enable_key_rotation: true,
      }),
    ).toBe(true);
  });

  it('refuses a cell without DR whose backups would be copied into its own region', () => {
    const input = defaultManifest();
    const c2 = input.cells[1] as { region: string };
    expect(() =>
      parseManifest({ ...input, cells: [input.cells[0], { ...c2, region: 'eu-west-1' }] } as typeof input),
    ).toThrow(/backupCopyRegion/);
  });
});
