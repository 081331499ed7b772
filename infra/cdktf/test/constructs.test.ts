import { AwsProvider } from '@cdktf/provider-aws/lib/provider';
import { Testing } from 'cdktf';
import { describe, expect, it } from 'vitest';
import { AwsLookups } from '../src/aws-context';
import { AuroraPostgres } from '../src/constructs/aurora';
import { KafkaCluster } from '../src/constructs/kafka';
import { Network } from '../src/constructs/network';
import { synthScope } from './support/terraform';

function parse(synthesized: string) {
  return JSON.parse(synthesized) as { resource: Record<string, Record<string, Record<string, unknown>>> };
}

describe('constructs in isolation', () => {
  it('carves three private and three public subnets, one each per AZ, with a NAT gateway per AZ', () => {
    const synthesized = synthScope((scope) => {
      new AwsProvider(scope, 'aws', { region: 'eu-west-1' });
      new Network(scope, 'network', {
        ctx: new AwsLookups(scope, 'ctx', 'eu-west-1'),
        name: 'test',
        cidr: '10.40.0.0/16',
        egress: 'nat-per-az',
      });
    });
    const subnets = Object.values(parse(synthesized).resource.aws_subnet ?? {}).map((s) => s.cidr_block);
    expect(subnets.sort()).toEqual(
      ['10.40.0.0/18', '10.40.64.0/18', '10.40.128.0/18', '10.40.192.0/20', '10.40.208.0/20', '10.40.224.0/20'].sort(),
    );
    expect(Object.keys(parse(synthesized).resource.aws_nat_gateway ?? {})).toHaveLength(3);
  });

  it('with a single NAT gateway, routes every AZ through it and reaches the AWS APIs a task needs through endpoints', () => {
    const synthesized = synthScope((scope) => {
      new AwsProvider(scope, 'aws', { region: 'eu-west-1' });
      new Network(scope, 'network', {
        ctx: new AwsLookups(scope, 'ctx', 'eu-west-1'),
        name: 'test',
        cidr: '10.40.0.0/16',
        egress: 'single-nat',
      });
    });
    const { resource } = parse(synthesized);
    const nats = Object.keys(resource.aws_nat_gateway ?? {});
    expect(nats).toHaveLength(1);
    expect(Object.keys(resource.aws_eip ?? {})).toHaveLength(1);
    const defaults = Object.values(resource.aws_route ?? {}).filter((r) => r.nat_gateway_id);
    expect(defaults.map((r) => r.nat_gateway_id)).toEqual(Array(3).fill(`\${aws_nat_gateway.${nats[0]}.id}`));
    const interfaces = Object.values(resource.aws_vpc_endpoint ?? {}).filter(
      (e) => e.vpc_endpoint_type === 'Interface',
    );
    expect(interfaces.map((e) => e.service_name).sort()).toEqual(
      ['ecr.api', 'ecr.dkr', 'logs', 'secretsmanager'].map((s) => `com.amazonaws.eu-west-1.${s}`),
    );
    for (const endpoint of interfaces) {
      expect(endpoint.private_dns_enabled).toBe(true);
      expect(endpoint.subnet_ids).toHaveLength(3);
    }
  });

  it('builds Aurora with one writer and the readers spread across AZs, behind a TLS-only IAM proxy', () => {
    const synthesized = synthScope((scope) => {
      new AwsProvider(scope, 'aws', { region: 'eu-west-1' });
      const ctx = new AwsLookups(scope, 'ctx', 'eu-west-1');
      const network = new Network(scope, 'network', { ctx, name: 'test', cidr: '10.40.0.0/16', egress: 'nat-per-az' });
      new AuroraPostgres(scope, 'db', {
        ctx,
        name: 'test',
        network,
        kmsKeyArn: 'arn:aws:kms:eu-west-1:123456789012:key/test',
        instanceClass: 'db.r7g.large',
        readers: 2,
        role: { kind: 'primary', global: false },
      });
    });
    const instances = Object.values(parse(synthesized).resource.aws_rds_cluster_instance ?? {});
    expect(instances).toHaveLength(3);
    expect(new Set(instances.map((i) => i.availability_zone)).size).toBe(3);
    expect(
      Testing.toHaveResourceWithProperties(synthesized, 'aws_rds_cluster', { manage_master_user_password: true }),
    ).toBe(true);
    expect(
      Testing.toHaveResourceWithProperties(synthesized, 'aws_db_proxy', {
        engine_family: 'POSTGRESQL',
        require_tls: true,
        default_auth_scheme: 'IAM_AUTH',
      }),
    ).toBe(true);
    expect(
      Testing.toHaveResourceWithProperties(synthesized, 'aws_db_proxy_endpoint', { target_role: 'READ_ONLY' }),
    ).toBe(true);
  });

  it('turns on multi-VPC IAM connectivity only for a cluster that feeds a cross-region replicator', () => {
    for (const replicationSource of [true, false]) {
      const synthesized = synthScope((scope) => {
        new AwsProvider(scope, 'aws', { region: 'eu-west-1' });
        const ctx = new AwsLookups(scope, 'ctx', 'eu-west-1');
        const network = new Network(scope, 'network', {
          ctx,
          name: 'test',
          cidr: '10.40.0.0/16',
          egress: 'nat-per-az',
        });
        new KafkaCluster(scope, 'kafka', {
          ctx,
          name: 'test',
          network,
          kmsKeyArn: 'arn:aws:kms:eu-west-1:123456789012:key/test',
          brokerType: 'kafka.m7g.large',
          brokers: 3,
          partitions: 12,
          storageGiB: 500,
          replicationSource,
        });
      });
      const [cluster] = Object.values(parse(synthesized).resource.aws_msk_cluster ?? {});
      expect(cluster).toBeDefined();
      const connectivity = (cluster?.broker_node_group_info as Record<string, unknown> | undefined)?.connectivity_info;
      if (replicationSource)
        expect(connectivity).toEqual({ vpc_connectivity: { client_authentication: { sasl: { iam: true } } } });
      else expect(connectivity).toBeUndefined();
    }
  });
});
