import { DataAwsElbServiceAccount } from '@cdktf/provider-aws/lib/data-aws-elb-service-account';
import type { S3Bucket } from '@cdktf/provider-aws/lib/s3-bucket';
import { Construct } from 'constructs';
import type { AwsContext } from '../aws-context';
import { privateBucket } from './private-bucket';

export interface AccessLogBucketProps {
  readonly ctx: AwsContext;
  /** The load balancer's name; the bucket is `<name>-logs-<account>-<region>`. */
  readonly name: string;
  readonly retentionDays: number;
}

/**
 * Where one load balancer writes its access logs. ALB access logs support only SSE-S3 (not KMS), so the
 * bucket is encrypted with S3-managed keys; it is private, versioned, TLS-only, and expires logs.
 */
export class AccessLogBucket extends Construct {
  readonly bucket: S3Bucket;
  readonly prefix = 'alb';

  constructor(scope: Construct, id: string, props: AccessLogBucketProps) {
    super(scope, id);
    const { ctx } = props;
    // Regions from before August 2022 deliver as the regional ELB account; newer ones as the log-delivery
    // service principal. Granting both covers every region the manifest may name.
    const elb = new DataAwsElbServiceAccount(this, 'elb-account', { provider: ctx.provider });
    this.bucket = privateBucket(this, {
      bucket: { bucket: `${props.name}-logs-${ctx.account}-${ctx.region}`, forceDestroy: false },
      encryption: 'sse-s3',
      checkovSkips: {
        CKV_AWS_145: 'ALB access log delivery supports SSE-S3 only, not SSE-KMS',
        CKV_AWS_18: 'this is the access-log bucket; logging it would need yet another bucket',
        CKV_AWS_144: 'access logs are operational data kept 90 days; no cross-region copy is required',
        CKV2_AWS_62: 'nothing reacts to new log objects; they are read on demand',
      },
      lifecycle: [
        {
          id: 'expire-access-logs',
          status: 'Enabled',
          filter: [{ prefix: '' }],
          expiration: [{ days: props.retentionDays }],
          noncurrentVersionExpiration: [{ noncurrentDays: 1 }],
          abortIncompleteMultipartUpload: [{ daysAfterInitiation: 1 }],
        },
      ],
      policyDocumentId: 'policy-document',
      provider: ctx.provider,
      statements: (bucket) => {
        const objects = `${bucket.arn}/${this.prefix}/AWSLogs/${ctx.account}/*`;
        return [
          {
            sid: 'ElbAccountDelivers',
            principals: [{ type: 'AWS', identifiers: [elb.arn] }],
            actions: ['s3:PutObject'],
            resources: [objects],
          },
          {
            sid: 'LogDeliveryServiceDelivers',
            principals: [{ type: 'Service', identifiers: ['logdelivery.elasticloadbalancing.amazonaws.com'] }],
            actions: ['s3:PutObject'],
            resources: [objects],
          },
        ];
      },
    });
  }
}
