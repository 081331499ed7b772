import { DataAwsElbServiceAccount } from '@cdktf/provider-aws/lib/data-aws-elb-service-account';
import { DataAwsIamPolicyDocument } from '@cdktf/provider-aws/lib/data-aws-iam-policy-document';
import { S3Bucket } from '@cdktf/provider-aws/lib/s3-bucket';
import { S3BucketLifecycleConfiguration } from '@cdktf/provider-aws/lib/s3-bucket-lifecycle-configuration';
import { S3BucketOwnershipControls } from '@cdktf/provider-aws/lib/s3-bucket-ownership-controls';
import { S3BucketPolicy } from '@cdktf/provider-aws/lib/s3-bucket-policy';
import { S3BucketPublicAccessBlock } from '@cdktf/provider-aws/lib/s3-bucket-public-access-block';
import { S3BucketServerSideEncryptionConfigurationA as S3BucketServerSideEncryptionConfiguration } from '@cdktf/provider-aws/lib/s3-bucket-server-side-encryption-configuration';
import { S3BucketVersioningA as S3BucketVersioning } from '@cdktf/provider-aws/lib/s3-bucket-versioning';
import { Construct } from 'constructs';
import type { AwsContext } from '../aws-context';
import { checkovSkip } from '../checkov';

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
    this.bucket = new S3Bucket(this, 'bucket', {
      bucket: `${props.name}-logs-${ctx.account}-${ctx.region}`,
      forceDestroy: false,
    });
    checkovSkip(this.bucket, {
      CKV_AWS_145: 'ALB access log delivery supports SSE-S3 only, not SSE-KMS',
      CKV_AWS_18: 'this is the access-log bucket; logging it would need yet another bucket',
      CKV_AWS_144: 'access logs are operational data kept 90 days; no cross-region copy is required',
      CKV2_AWS_62: 'nothing reacts to new log objects; they are read on demand',
    });

    new S3BucketPublicAccessBlock(this, 'public-access', {
      bucket: this.bucket.id,
      blockPublicAcls: true,
      blockPublicPolicy: true,
      ignorePublicAcls: true,
      restrictPublicBuckets: true,
    });
    new S3BucketOwnershipControls(this, 'ownership', {
      bucket: this.bucket.id,
      rule: { objectOwnership: 'BucketOwnerEnforced' },
    });
    new S3BucketVersioning(this, 'versioning', {
      bucket: this.bucket.id,
      versioningConfiguration: { status: 'Enabled' },
    });
    new S3BucketServerSideEncryptionConfiguration(this, 'encryption', {
      bucket: this.bucket.id,
      rule: [{ applyServerSideEncryptionByDefault: { sseAlgorithm: 'AES256' } }],
    });
    new S3BucketLifecycleConfiguration(this, 'lifecycle', {
      bucket: this.bucket.id,
      rule: [
        {
          id: 'expire-access-logs',
          status: 'Enabled',
          filter: [{ prefix: '' }],
          expiration: [{ days: props.retentionDays }],
          noncurrentVersionExpiration: [{ noncurrentDays: 1 }],
          abortIncompleteMultipartUpload: [{ daysAfterInitiation: 1 }],
        },
      ],
    });

    // Regions from before August 2022 deliver as the regional ELB account; newer ones as the log-delivery
    // service principal. Granting both covers every region the manifest may name.
    const elb = new DataAwsElbServiceAccount(this, 'elb-account', { provider: ctx.provider });
    const objects = `${this.bucket.arn}/${this.prefix}/AWSLogs/${ctx.account}/*`;
    const policy = new DataAwsIamPolicyDocument(this, 'policy-document', {
      provider: ctx.provider,
      statement: [
        {
          sid: 'DenyPlainHttp',
          effect: 'Deny',
          principals: [{ type: '*', identifiers: ['*'] }],
          actions: ['s3:*'],
          resources: [this.bucket.arn, `${this.bucket.arn}/*`],
          condition: [{ test: 'Bool', variable: 'aws:SecureTransport', values: ['false'] }],
        },
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
      ],
    });
    new S3BucketPolicy(this, 'policy', { bucket: this.bucket.id, policy: policy.json });
  }
}
