import { Testing } from 'cdktf';
import { beforeAll, describe, expect, it } from 'vitest';
import { parseManifest } from '../src/manifest';
import { defaultManifest, tenCellManifest } from './support/manifests';
import {
  type Block,
  policyStatements,
  refTo,
  resources,
  type StackJson,
  type Synthesized,
  stack,
  synthPlatform,
} from './support/terraform';

/** Actions that must never be granted on every resource. */
const GUARDED = /^(kafka-cluster|kafka|secretsmanager|kms):/;

function first<T>(items: T[], what: string): T {
  const item = items[0];
  if (!item) throw new Error(`expected at least one ${what}`);
  return item;
}

/** The security group of the ECS service with this name. */
function serviceSecurityGroup(json: StackJson, serviceName: string): string {
  const service = first(
    resources(json, 'aws_ecs_service').filter((s) => s.body.name === serviceName),
    `service ${serviceName}`,
  );
  const network = service.body.network_configuration as { security_groups: string[] };
  return first(network.security_groups, 'security group');
}

describe('security properties of the synthesized Terraform', () => {
  let synth: Synthesized;
  let all: { name: string; json: StackJson; text: string }[];
  beforeAll(() => {
    synth = synthPlatform(tenCellManifest());
    all = [...synth.stacks.values()];
  });

  it('never gives a task or service a public IP', () => {
    let services = 0;
    for (const { name, json } of all) {
      for (const service of resources(json, 'aws_ecs_service')) {
        services++;
        const network = service.body.network_configuration as Block | undefined;
        expect(network?.assign_public_ip, `${name}/${service.name}`).toBe(false);
      }
      for (const subnet of resources(json, 'aws_subnet')) {
        expect(subnet.body.map_public_ip_on_launch, `${name}/${subnet.name}`).toBe(false);
      }
      expect(resources(json, 'aws_instance')).toEqual([]);
    }
    // 10 cells and 4 standbys with 8 services each, plus the control plane's 5.
    expect(services).toBe(14 * 8 + 5);
  });

  it('keeps every Aurora cluster encrypted, private, protected from deletion and TLS-only', () => {
    for (const { name, json, text } of all) {
      for (const cluster of resources(json, 'aws_rds_cluster')) {
        expect(cluster.body, `${name}/${cluster.name}`).toMatchObject({
          storage_encrypted: true,
          deletion_protection: true,
          backup_retention_period: 35,
          iam_database_authentication_enabled: true,
          enabled_cloudwatch_logs_exports: ['postgresql'],
        });
        expect(cluster.body.kms_key_id).toMatch(/^\$\{aws_kms_key\./);
        expect(cluster.body).not.toHaveProperty('master_password');
      }
      for (const instance of resources(json, 'aws_rds_cluster_instance')) {
        expect(instance.body, `${name}/${instance.name}`).toMatchObject({
          publicly_accessible: false,
          performance_insights_enabled: true,
        });
      }
      for (const group of resources(json, 'aws_rds_cluster_parameter_group')) {
        expect(group.body.parameter, `${name}/${group.name}`).toContainEqual({ name: 'rds.force_ssl', value: '1' });
      }
      if (resources(json, 'aws_rds_cluster').length > 0) {
        expect(
          Testing.toHaveResourceWithProperties(text, 'aws_db_proxy', {
            require_tls: true,
            default_auth_scheme: 'IAM_AUTH',
          }),
          name,
        ).toBe(true);
      }
    }
  });

  it('lets RDS manage the master password unless the cluster is a global primary, which writes it write-only', () => {
    const manifest = parseManifest(tenCellManifest());
    for (const cell of manifest.cells) {
      const { json } = stack(synth, `cell-${cell.id}`);
      const cluster = first(resources(json, 'aws_rds_cluster'), 'cluster').body;
      if (cell.dr) {
        expect(cluster.manage_master_user_password).toBeUndefined();
        expect(cluster.master_password_wo).toMatch(/^\$\{ephemeral\.aws_secretsmanager_random_password\./);
        expect(resources(json, 'aws_rds_global_cluster')).toHaveLength(1);
      } else {
        expect(cluster.manage_master_user_password).toBe(true);
        expect(cluster.master_user_secret_kms_key_id).toMatch(/^\$\{aws_kms_key\./);
        expect(resources(json, 'aws_rds_global_cluster')).toHaveLength(0);
      }
    }
  });

  it('runs MSK with IAM authentication only, TLS in transit and between brokers, KMS at rest', () => {
    let clusters = 0;
    for (const { name, json } of all) {
      for (const msk of resources(json, 'aws_msk_cluster')) {
        clusters++;
        expect(msk.body, `${name}/${msk.name}`).toMatchObject({
          number_of_broker_nodes: 3,
          client_authentication: { sasl: { iam: true }, unauthenticated: false },
          encryption_info: { encryption_in_transit: { client_broker: 'TLS', in_cluster: true } },
        });
        expect((msk.body.encryption_info as Block).encryption_at_rest_kms_key_arn).toMatch(/^\$\{aws_kms_key\./);
      }
      for (const config of resources(json, 'aws_msk_configuration')) {
        const properties = String(config.body.server_properties).split('\n');
        expect(properties).toEqual(
          expect.arrayContaining([
            'auto.create.topics.enable=false',
            'default.replication.factor=3',
            'min.insync.replicas=2',
            'unclean.leader.election.enable=false',
          ]),
        );
      }
    }
    // One per cell and standby, and the control plane's for its facts.
    expect(clusters).toBe(15);
  });

  it("admits traffic to the API tasks only from their load balancer's security group", () => {
    const apis = all
      .filter(({ name }) => name.startsWith('cell-'))
      .map(({ name, json }) => ({ name, json, group: serviceSecurityGroup(json, 'api') }));
    expect(apis).toHaveLength(14);
    for (const { name, json, group } of apis) {
      const albGroups = resources(json, 'aws_lb').map((lb) =>
        first((lb.body.security_groups as string[]) ?? [], 'load balancer security group'),
      );
      expect(albGroups, name).toHaveLength(1);
      const ingress = resources(json, 'aws_vpc_security_group_ingress_rule').filter(
        (r) => r.body.security_group_id === group,
      );
      expect(ingress.length, name).toBeGreaterThan(0);
      for (const rule of ingress) {
        expect(rule.body, `${name}/${rule.name}`).toMatchObject({
          referenced_security_group_id: albGroups[0],
          from_port: 8080,
        });
        expect(rule.body).not.toHaveProperty('cidr_ipv4');
        expect(rule.body).not.toHaveProperty('prefix_list_id');
      }
      // No inline rules that could widen it behind the standalone ones' back.
      const [, groupName] = /^\$\{aws_security_group\.([^.]+)\.id\}$/.exec(group) ?? [];
      const sg = resources(json, 'aws_security_group').find((g) => g.name === groupName);
      expect(sg?.body.ingress, name).toBeUndefined();
    }
  });

  it('opens nothing to the internet', () => {
    for (const { name, json } of all) {
      for (const rule of resources(json, 'aws_vpc_security_group_ingress_rule')) {
        expect(rule.body.cidr_ipv4, `${name}/${rule.name}`).not.toBe('0.0.0.0/0');
      }
      for (const lb of resources(json, 'aws_lb')) expect(lb.body.internal, `${name}/${lb.name}`).toBe(true);
    }
  });

  it('grants no Kafka, Secrets Manager or KMS action on "*", and no wildcard action at all', () => {
    let guarded = 0;
    for (const { name, json } of all) {
      for (const s of policyStatements(json)) {
        if (s.effect !== 'Allow') continue;
        for (const action of s.actions) expect(action, `${name}/${s.where}`).not.toMatch(/(^\*$|:\*$)/);
        if (!s.actions.some((a) => GUARDED.test(a))) continue;
        guarded++;
        expect(s.resources, `${name}/${s.where}`).not.toContain('*');
        expect(s.resources.length, `${name}/${s.where}`).toBeGreaterThan(0);
      }
    }
    // Sanity: the walk saw the per-service Kafka, secret and KMS grants it is meant to police.
    expect(guarded).toBeGreaterThan(100);
  });

  it('scopes each service to its own log group and its own secrets', () => {
    const { json } = stack(synth, 'cell-c2');
    const named = (type: string, name: string) =>
      first(
        resources(json, type).filter((r) => r.body.name === name),
        `${type} ${name}`,
      ).name;
    const secret = refTo(
      'aws_secretsmanager_secret',
      named('aws_secretsmanager_secret', 'onsale/c2/payment/stripe-secret-key'),
      'arn',
    );
    const logGroup = refTo('aws_cloudwatch_log_group', named('aws_cloudwatch_log_group', '/onsale-c2/payment'), 'arn');

    const payment = policyStatements(json).filter((s) => s.where.includes('service-payment_execution-role_policy'));
    const reads = first(
      payment.filter((s) => s.actions.includes('secretsmanager:GetSecretValue')),
      'secret statement',
    );
    expect(reads.resources).toEqual([secret]);
    const logs = first(
      payment.filter((s) => s.actions.includes('logs:PutLogEvents')),
      'log statement',
    );
    expect(logs.resources).toEqual([`${logGroup}:log-stream:*`]);
    // The saga has no secrets, so its execution role cannot read any.
    const saga = policyStatements(json).filter((s) => s.where.includes('service-saga_execution-role_policy'));
    expect(saga.flatMap((s) => s.actions)).not.toContain('secretsmanager:GetSecretValue');
  });

  it('blocks public access to the reporting bucket and keeps it encrypted and versioned', () => {
    const { text } = stack(synth, 'control-plane');
    expect(
      Testing.toHaveResourceWithProperties(text, 'aws_s3_bucket_public_access_block', {
        block_public_acls: true,
        block_public_policy: true,
        ignore_public_acls: true,
        restrict_public_buckets: true,
      }),
    ).toBe(true);
    expect(
      Testing.toHaveResourceWithProperties(text, 'aws_s3_bucket_versioning', {
        versioning_configuration: { status: 'Enabled' },
      }),
    ).toBe(true);
    expect(
      Testing.toHaveResourceWithProperties(text, 'aws_s3_bucket_server_side_encryption_configuration', {
        rule: [{ apply_server_side_encryption_by_default: { sse_algorithm: 'aws:kms' }, bucket_key_enabled: true }],
      }),
    ).toBe(true);
  });

  it('signs admission tokens with no KMS key (the application rotates its own under a KEK) and keeps the caches Multi-AZ and encrypted', () => {
    const { json } = stack(synth, 'control-plane');
    expect(resources(json, 'aws_kms_key').filter((k) => k.body.key_usage === 'SIGN_VERIFY')).toEqual([]);
    expect(policyStatements(json).flatMap((s) => s.actions)).not.toContain('kms:Sign');
    expect(resources(json, 'aws_secretsmanager_secret').map((s) => s.body.name)).toContain(
      'onsale/control-plane/signing-key-kek',
    );
    for (const { name, json } of all) {
      for (const redis of resources(json, 'aws_elasticache_replication_group')) {
        expect(redis.body, `${name}/${redis.name}`).toMatchObject({
          automatic_failover_enabled: true,
          multi_az_enabled: true,
          at_rest_encryption_enabled: 'true',
          transit_encryption_enabled: true,
          transit_encryption_mode: 'required',
        });
      }
    }
  });

  it('puts the CloudFront web ACL in us-east-1 through a provider alias, with rate limits and AWS rule groups', () => {
    const { json, text } = stack(synth, 'edge');
    const providers = json.provider?.aws ?? [];
    expect(providers).toContainEqual(expect.objectContaining({ alias: 'us-east-1', region: 'us-east-1' }));
    const acl = first(resources(json, 'aws_wafv2_web_acl'), 'web ACL').body;
    expect(acl).toMatchObject({ scope: 'CLOUDFRONT', provider: 'aws.us-east-1' });
    const statements = (acl.rule as Block[]).map((r) => r.statement as Block);
    expect(statements.filter((s) => 'rate_based_statement' in s)).toHaveLength(2);
    const groups = statements.flatMap((s) =>
      s.managed_rule_group_statement ? [(s.managed_rule_group_statement as Block).name] : [],
    );
    expect(groups).toEqual(
      expect.arrayContaining([
        'AWSManagedRulesCommonRuleSet',
        'AWSManagedRulesKnownBadInputsRuleSet',
        'AWSManagedRulesAmazonIpReputationList',
      ]),
    );
    expect(
      Testing.toHaveResourceWithProperties(text, 'aws_cloudfront_distribution', {
        default_cache_behavior: { viewer_protocol_policy: 'redirect-to-https' },
        viewer_certificate: { minimum_protocol_version: 'TLSv1.2_2021', ssl_support_method: 'sni-only' },
      }),
    ).toBe(true);
  });
});

describe('the default manifest', () => {
  it('synthesizes the same security posture', () => {
    const synth = synthPlatform(defaultManifest());
    const services = [...synth.stacks.values()].flatMap(({ json }) => resources(json, 'aws_ecs_service'));
    expect(services.length).toBe(3 * 8 + 5);
    for (const service of services) {
      expect((service.body.network_configuration as Block).assign_public_ip).toBe(false);
    }
  });
});
