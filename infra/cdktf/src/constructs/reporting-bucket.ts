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
import type { Statement } from './iam';

export interface ReportingBucketProps {
  readonly ctx: AwsContext;
  readonly kmsKeyArn: string;
  readonly noncurrentVersionDays: number;
  readonly infrequentAccessAfterDays: number;
}

/** The cross-cell reporting projections: private, KMS-encrypted, versioned, TLS-only. */
export class ReportingBucket extends Construct {
  readonly bucket: S3Bucket;
  private readonly kmsKeyArn: string;

  constructor(scope: Construct, id: string, props: ReportingBucketProps) {
    super(scope, id);
    const { ctx } = props;
    this.kmsKeyArn = props.kmsKeyArn;

    // Bucket names are global; the account and region make this one unique without a manifest field.
    this.bucket = new S3Bucket(this, 'bucket', { bucket: `onsale-reporting-${ctx.account}-${ctx.region}` });
    checkovSkip(this.bucket, {
      CKV_AWS_18: 'only the reporting role reads and writes it, through IAM; CloudTrail records those calls',
      CKV_AWS_144:
        "projections are rebuilt from the cells' Kafka facts (the rebuild path is tested); a replica adds nothing",
      CKV2_AWS_62: 'nothing reacts to a new projection object; readers query the sales API',
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
      rule: [
        {
          applyServerSideEncryptionByDefault: { sseAlgorithm: 'aws:kms', kmsMasterKeyId: props.kmsKeyArn },
          bucketKeyEnabled: true,
        },
      ],
    });
    new S3BucketLifecycleConfiguration(this, 'lifecycle', {
      bucket: this.bucket.id,
      rule: [
        {
          id: 'cool-old-projections',
          status: 'Enabled',
          filter: [{ prefix: '' }],
          transition: [{ days: props.infrequentAccessAfterDays, storageClass: 'STANDARD_IA' }],
        },
        {
          id: 'expire-overwritten-versions',
          status: 'Enabled',
          filter: [{ prefix: '' }],
          noncurrentVersionExpiration: [{ noncurrentDays: props.noncurrentVersionDays }],
          expiration: [{ expiredObjectDeleteMarker: true }],
        },
        {
          id: 'abort-stalled-uploads',
          status: 'Enabled',
          filter: [{ prefix: '' }],
          abortIncompleteMultipartUpload: [{ daysAfterInitiation: 7 }],
        },
      ],
    });

    const tlsOnly = new DataAwsIamPolicyDocument(this, 'tls-only', {
      statement: [
        {
          sid: 'DenyPlainHttp',
          effect: 'Deny',
          principals: [{ type: '*', identifiers: ['*'] }],
          actions: ['s3:*'],
          resources: [this.bucket.arn, `${this.bucket.arn}/*`],
          condition: [{ test: 'Bool', variable: 'aws:SecureTransport', values: ['false'] }],
        },
      ],
    });
    new S3BucketPolicy(this, 'policy', { bucket: this.bucket.id, policy: tlsOnly.json });
  }

  /** Read and rewrite projections; the bucket key means KMS calls are per bucket key, not per object. */
  writeStatements(): Statement[] {
    return [
      { sid: 'ListProjections', actions: ['s3:ListBucket'], resources: [this.bucket.arn] },
      {
        sid: 'ReadWriteProjections',
        actions: ['s3:GetObject', 's3:PutObject', 's3:DeleteObject'],
        resources: [`${this.bucket.arn}/*`],
      },
      { sid: 'ProjectionEncryption', actions: ['kms:GenerateDataKey', 'kms:Decrypt'], resources: [this.kmsKeyArn] },
    ];
  }
}
