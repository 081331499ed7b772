import { TerraformOutput } from 'cdktf';
import type { Construct } from 'constructs';
import { checkovSkip } from '../checkov';
import { Backups } from '../constructs/backups';
import { CellRuntime, TOPIC_REPLICATION_FACTOR } from '../constructs/cell-runtime';
import { PrivateName } from '../constructs/private-name';
import {
  type CellSpec,
  cellApiUrl,
  cellImage,
  cellMailSender,
  certificateFor,
  controlPlaneApiUrl,
  type Manifest,
} from '../manifest';
import { cellPrefix, InternalName, StackName } from '../naming';
import { cellTopics } from '../roles';
import type { ControlPlaneStack } from './control-plane-stack';
import { OnsaleStack } from './onsale-stack';
import { cellRunTaskOutputs } from './run-task-outputs';

/** Daily snapshots of a cell without DR, in its region and copied to another, kept this long. */
const BACKUP_RETENTION_DAYS = 35;

/**
 * One purchase cell. Every cell is this class with a different manifest entry; nothing here knows about
 * any other cell.
 */
export class CellStack extends OnsaleStack {
  readonly cell: CellSpec;
  readonly runtime: CellRuntime;

  constructor(scope: Construct, manifest: Manifest, cell: CellSpec, controlPlane: ControlPlaneStack) {
    super(scope, StackName.cell(cell.id), cell.region, { 'onsale:cell': cell.id });
    this.cell = cell;
    const controlPlaneRegion = this.regionContext('control-plane', manifest.controlPlane.region);

    this.runtime = new CellRuntime(this, 'cell', {
      ctx: this.ctx,
      prefix: cellPrefix(cell.id),
      cell,
      cidr: cell.cidr,
      image: cellImage(manifest, cell),
      certificateArn: certificateFor(manifest, cell.region),
      controlPlane: controlPlane.linkFor(controlPlaneRegion),
      mode: { kind: 'primary', drRegion: cell.dr?.region },
      epoch: cell.epoch,
      identity: manifest.identity,
      ticketKeys: manifest.ticketKeys,
      controlPlaneApiUrl: controlPlaneApiUrl(manifest),
      mail: cellMailSender(manifest, cell.id),
    });

    // A cell with a DR standby has its copy in another region already (the global database secondary).
    if (!cell.dr) {
      // The manifest refuses a cell without dr whose default copy region would be its own.
      const copyRegion = cell.backupCopyRegion ?? manifest.controlPlane.region;
      new Backups(this, 'backups', {
        ctx: this.ctx,
        copy: this.regionContext('backup-copy', copyRegion),
        prefix: cellPrefix(cell.id),
        kmsKeyArn: this.runtime.key.arn,
        resourceArns: [this.runtime.database.cluster.arn],
        retentionDays: BACKUP_RETENTION_DAYS,
      });
    } else {
      checkovSkip(this.runtime.database.cluster, {
        CKV2_AWS_8:
          "the global database secondary in the DR region is this cluster's cross-region copy; Aurora keeps 35 days of point-in-time recovery",
      });
    }

    const topics = cellTopics(cell.id);
    // The cell's API under its name, resolvable from the control plane's VPC and the cell's own.
    new PrivateName(this, 'api-name', {
      zoneId: controlPlane.privateZone.zoneId,
      name: InternalName.cellApi(manifest.controlPlane.internalDomain, cell.id),
      loadBalancer: this.runtime.apiLoadBalancer,
      network: { network: this.runtime.network, region: cell.region },
    });

    // The registry's baseUrl for this cell (POST /operator/cells): the control plane and the router call it there.
    new TerraformOutput(this, 'api_url', { value: cellApiUrl(manifest, cell.id) });
    new TerraformOutput(this, 'api_load_balancer', { value: this.runtime.apiLoadBalancer.lb.dnsName });
    new TerraformOutput(this, 'alarm_topic', { value: this.runtime.alarms.topic.arn });
    new TerraformOutput(this, 'database_proxy', { value: this.runtime.database.proxy.endpoint });
    new TerraformOutput(this, 'database_master_secret', { value: this.runtime.database.masterSecretArn });
    // The sender domain's DNS must carry these DKIM CNAMEs before SES verifies it (runbooks/deploy-cell.md, step 3).
    new TerraformOutput(this, 'mail_sender', {
      value: { domain: this.runtime.mail.identity.emailIdentity, dkimTokens: this.runtime.mail.dkimTokens },
    });
    new TerraformOutput(this, 'kafka_bootstrap_brokers', { value: this.runtime.kafka.bootstrapBrokers });
    new TerraformOutput(this, 'kafka_topics', {
      value: {
        names: Object.values(topics),
        partitions: cell.sizing.kafka.partitions,
        replicationFactor: TOPIC_REPLICATION_FACTOR,
      },
    });
    // Run to completion, in this order, before the services take traffic (runbooks/deploy-cell.md).
    new TerraformOutput(this, 'deploy_tasks', { value: this.runtime.oneOffTasks });
    // Everything the deploy command needs (scripts/deploy): run-task's network, the tasks in order, the services.
    new TerraformOutput(this, 'deploy', { value: this.runtime.deployPlan });
    cellRunTaskOutputs(this, this.runtime);
  }
}
