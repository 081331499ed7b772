import { DataAwsIamPolicyDocument } from '@cdktf/provider-aws/lib/data-aws-iam-policy-document';
import { S3Bucket } from '@cdktf/provider-aws/lib/s3-bucket';
import { S3BucketLifecycleConfiguration } from '@cdktf/provider-aws/lib/s3-bucket-lifecycle-configuration';
import { S3BucketOwnershipControls } from '@cdktf/provider-aws/lib/s3-bucket-ownership-controls';
import { S3BucketPolicy } from '@cdktf/provider-aws/lib/s3-bucket-policy';
import { S3BucketPublicAccessBlock } from '@cdktf/provider-aws/lib/s3-bucket-public-access-block';
import { S3BucketServerSideEncryptionConfigurationA as S3BucketServerSideEncryptionConfiguration } from '@cdktf/provider-aws/lib/s3-bucket-server-side-encryption-configuration';
import { S3BucketVersioningA as S3BucketVersioning } from '@cdktf/provider-aws/lib/s3-bucket-versioning';
import { Construct } from 'constructs';
import { checkovSkip } from '../checkov';
import type { Statement } from './iam';

export interface TicketsBucketProps {
  readonly cellId: string;
  /** The cell's key: the PDFs carry buyers' signed tickets. */
  readonly kmsKeyArn: string;
}

/**
 * A cell's ticket documents (order PDFs, the events' signed void lists): private, KMS-encrypted,
 * versioned, TLS-only. The ticket worker writes, the API reads; buyers get them through the API only.
 */
export class TicketsBucket extends Construct {
  readonly bucket: S3Bucket;
  private readonly kmsKeyArn: string;

  constructor(scope: Construct, id: string, props: TicketsBucketProps) {
    super(scope, id);
    this.kmsKeyArn = props.kmsKeyArn;
    // Names are global and the cell id alone is not: Terraform completes the prefix (at most 37 characters).
    this.bucket = new S3Bucket(this, 'bucket', { bucketPrefix: `tickets-${props.cellId.slice(0, 27)}-` });
    checkovSkip(this.bucket, {
      CKV_AWS_18: 'only the cell API and ticket worker roles touch it, through IAM; CloudTrail records those calls',
      CKV_AWS_144:
        'the documents derive from the cell database, which the DR region replicates; after a failover a PDF not rendered there yet is answered tickets_not_issued (a re-render job is open work), never served stale',
      CKV2_AWS_62: 'nothing reacts to a new PDF; buyers fetch them through the cell API',
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
          // Void lists are rewritten on every void; their old versions have no reader.
          id: 'expire-overwritten-versions',
          status: 'Enabled',
          filter: [{ prefix: '' }],
          noncurrentVersionExpiration: [{ noncurrentDays: 30 }],
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

  /** The ticket worker: store PDFs and void lists (a HEAD is s3:GetObject; ListBucket makes a missing key a 404, not a 403). */
  writeStatements(): Statement[] {
    return [
      { sid: 'ListTicketDocuments', actions: ['s3:ListBucket'], resources: [this.bucket.arn] },
      {
        sid: 'ReadWriteTicketDocuments',
        actions: ['s3:GetObject', 's3:PutObject'],
        resources: [`${this.bucket.arn}/*`],
      },
      { sid: 'TicketDocumentKey', actions: ['kms:GenerateDataKey', 'kms:Decrypt'], resources: [this.kmsKeyArn] },
    ];
  }

  /** The cell API: serve them. */
  readStatements(): Statement[] {
    return [
      { sid: 'ListTicketDocuments', actions: ['s3:ListBucket'], resources: [this.bucket.arn] },
      { sid: 'ReadTicketDocuments', actions: ['s3:GetObject'], resources: [`${this.bucket.arn}/*`] },
      { sid: 'TicketDocumentKey', actions: ['kms:Decrypt'], resources: [this.kmsKeyArn] },
    ];
  }
}
