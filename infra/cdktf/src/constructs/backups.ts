import { BackupPlan } from '@cdktf/provider-aws/lib/backup-plan';
import { BackupSelection } from '@cdktf/provider-aws/lib/backup-selection';
import { BackupVault } from '@cdktf/provider-aws/lib/backup-vault';
import { KmsKey } from '@cdktf/provider-aws/lib/kms-key';
import { Construct } from 'constructs';
import type { AwsContext } from '../aws-context';
import { checkovSkip, SkipReason } from '../checkov';
import { ServiceRole } from './iam';

export interface BackupsProps {
  readonly ctx: AwsContext;
  /** A provider in the region the snapshots are copied to (not the database's). */
  readonly copy: AwsContext;
  readonly prefix: string;
  /** The stack's customer-managed key, for the local vault. */
  readonly kmsKeyArn: string;
  readonly resourceArns: readonly string[];
  readonly retentionDays: number;
}

/** The AWS-managed policies AWS Backup's own documentation attaches to its service role. */
const BACKUP_POLICIES = [
  'service-role/AWSBackupServiceRolePolicyForBackup',
  'service-role/AWSBackupServiceRolePolicyForRestores',
] as const;

/**
 * AWS Backup for a database that has no standby in another region: a daily snapshot kept in a vault in its
 * own region and copied to a vault in another region, so losing the region loses at most a day of data
 * (Aurora's own 35-day point-in-time recovery covers everything short of that).
 */
export class Backups extends Construct {
  readonly plan: BackupPlan;
  readonly vault: BackupVault;
  readonly copyVault: BackupVault;

  constructor(scope: Construct, id: string, props: BackupsProps) {
    super(scope, id);
    const { ctx, copy, prefix } = props;

    this.vault = new BackupVault(this, 'vault', {
      name: `${prefix}-backups`,
      kmsKeyArn: props.kmsKeyArn,
    });
    // The copy region's vault has its own key there: a key cannot leave its region.
    const copyKey = new KmsKey(this, 'copy-key', {
      provider: copy.provider,
      description: `${prefix} backup copies`,
      enableKeyRotation: true,
      deletionWindowInDays: 30,
    });
    checkovSkip(copyKey, { CKV2_AWS_64: SkipReason.defaultKeyPolicy });
    this.copyVault = new BackupVault(this, 'copy-vault', {
      provider: copy.provider,
      name: `${prefix}-backups-copy`,
      kmsKeyArn: copyKey.arn,
    });

    const lifecycle = { deleteAfter: props.retentionDays };
    this.plan = new BackupPlan(this, 'plan', {
      name: `${prefix}-daily`,
      rule: [
        {
          ruleName: 'daily-with-cross-region-copy',
          targetVaultName: this.vault.name,
          // 03:00 UTC; an onsale that runs over it only slows the snapshot, never the writer (Aurora snapshots
          // read the storage layer).
          schedule: 'cron(0 3 * * ? *)',
          startWindow: 60,
          completionWindow: 360,
          lifecycle,
          copyAction: [{ destinationVaultArn: this.copyVault.arn, lifecycle }],
        },
      ],
    });

    const role = new ServiceRole(this, 'role', {
      ctx,
      name: `${prefix}-backup`,
      service: 'backup.amazonaws.com',
      statements: [],
      managedPolicies: [...BACKUP_POLICIES],
    });
    new BackupSelection(this, 'selection', {
      name: `${prefix}-databases`,
      planId: this.plan.id,
      iamRoleArn: role.role.arn,
      resources: [...props.resourceArns],
    });
  }
}
