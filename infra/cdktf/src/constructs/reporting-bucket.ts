import type { S3Bucket } from '@cdktf/provider-aws/lib/s3-bucket';
import { Construct } from 'constructs';
import type { AwsContext } from '../aws-context';
import type { Statement } from './iam';
import { ABORT_STALLED_UPLOADS, privateBucket } from './private-bucket';

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
    this.bucket = privateBucket(this, {
      bucket: { bucket: `onsale-reporting-${ctx.account}-${ctx.region}` },
      encryption: { kmsKeyArn: props.kmsKeyArn },
      checkovSkips: {
        CKV_AWS_18: 'only the reporting role reads and writes it, through IAM; CloudTrail records those calls',
        CKV_AWS_144:
          "projections are rebuilt from the cells' Kafka facts (the rebuild path is tested); a replica adds nothing",
        CKV2_AWS_62: 'nothing reacts to a new projection object; readers query the sales API',
      },
      lifecycle: [
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
        ABORT_STALLED_UPLOADS,
      ],
    });
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
