import { beforeAll, describe, expect, it } from 'vitest';
import { defaultManifest } from './support/manifests';
import { type Block, policyStatements, resources, type Synthesized, stack, synthPlatform } from './support/terraform';

describe('the DR standby of cell c1', () => {
  let synth: Synthesized;
  beforeAll(() => {
    synth = synthPlatform(defaultManifest());
  });

  it('follows the primary as an Aurora global-database secondary in the DR region', () => {
    const { json } = stack(synth, 'cell-c1-dr');
    expect(json.provider?.aws?.[0]).toMatchObject({ region: 'eu-central-1' });
    const [cluster] = resources(json, 'aws_rds_cluster');
    expect(cluster?.body.global_cluster_identifier).toMatch(
      /terraform_remote_state\.cross-stack-reference-input-cell-c1/,
    );
    expect(cluster?.body).not.toHaveProperty('master_username');
    expect(cluster?.body).toMatchObject({ storage_encrypted: true, deletion_protection: true });
    const primary = stack(synth, 'cell-c1').json;
    expect(resources(primary, 'aws_rds_global_cluster')[0]?.body).toMatchObject({
      global_cluster_identifier: 'onsale-c1',
    });
  });

  it("replicates the cell's topics under the same names and syncs consumer-group offsets", () => {
    const { json } = stack(synth, 'cell-c1-dr');
    const [replicator] = resources(json, 'aws_msk_replicator');
    const info = replicator?.body.replication_info_list as Block;
    expect(info.topic_replication).toEqual([
      expect.objectContaining({
        topics_to_replicate: ['cell\\.c1\\..*'],
        topic_name_configuration: { type: 'IDENTICAL' },
        starting_position: { type: 'EARLIEST' },
      }),
    ]);
    expect(info.consumer_group_replication).toEqual([
      expect.objectContaining({
        // The application's group names: c1.saga, c1.payments, c1.tickets.
        consumer_groups_to_replicate: ['c1\\..*'],
        synchronise_consumer_group_offsets: true,
      }),
    ]);
  });

  it('opens the source cluster to MSK Replicator only, from the primary region', () => {
    const { json } = stack(synth, 'cell-c1-dr');
    const [policy] = resources(json, 'aws_msk_cluster_policy');
    expect(policy?.body.provider).toBe('aws.primary');
    const statements = policyStatements(json).filter((s) => s.where.includes('source-cluster-policy'));
    expect(statements.flatMap((s) => s.actions).sort()).toEqual(
      ['kafka:CreateVpcConnection', 'kafka:DescribeClusterV2', 'kafka:GetBootstrapBrokers'].sort(),
    );
  });

  it('alarms on cross-region lag of both the database and the topics', () => {
    const { json } = stack(synth, 'cell-c1-dr');
    const metrics = resources(json, 'aws_cloudwatch_metric_alarm').map((a) => a.body.metric_name);
    expect(metrics).toEqual(expect.arrayContaining(['AuroraGlobalDBReplicationLag', 'ReplicationLatency']));
  });

  it('reads the replicated secrets in its own region', () => {
    const { json } = stack(synth, 'cell-c1-dr');
    const payment = policyStatements(json).find(
      (s) =>
        s.where.includes('service-payment_execution-role_policy') &&
        s.actions.includes('secretsmanager:GetSecretValue'),
    );
    expect(payment?.resources).toHaveLength(1);
    expect(payment?.resources[0]).toMatch(/^\$\{replace\(.*, ":eu-west-1:", ":eu-central-1:"\)\}$/);
    const primary = stack(synth, 'cell-c1').json;
    const secrets = resources(primary, 'aws_secretsmanager_secret').filter((s) =>
      String(s.body.name).startsWith('onsale/c1/'),
    );
    for (const secret of secrets) expect(secret.body.replica).toEqual([{ region: 'eu-central-1' }]);
  });
});
