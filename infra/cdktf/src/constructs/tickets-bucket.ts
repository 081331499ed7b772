import type { S3Bucket } from '@cdktf/provider-aws/lib/s3-bucket';
import { Construct } from 'constructs';
import type { Statement } from './iam';
import { ABORT_STALLED_UPLOADS, privateBucket } from './private-bucket';

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
    this.bucket = privateBucket(this, {
      bucket: { bucketPrefix: `tickets-${props.cellId.slice(0, 27)}-` },
      encryption: { kmsKeyArn: props.kmsKeyArn },
      checkovSkips: {
        CKV_AWS_18: 'only the cell API and ticket worker roles touch it, through IAM; CloudTrail records those calls',
        CKV_AWS_144:
          'the documents derive from the cell database, which the DR region replicates; after a failover a PDF not rendered there yet is answered tickets_not_issued (a re-render job is open work), never served stale',
        CKV2_AWS_62: 'nothing reacts to a new PDF; buyers fetch them through the cell API',
      },
      lifecycle: [
        {
          // Void lists are rewritten on every void; their old versions have no reader.
          id: 'expire-overwritten-versions',
          status: 'Enabled',
          filter: [{ prefix: '' }],
          noncurrentVersionExpiration: [{ noncurrentDays: 30 }],
          expiration: [{ expiredObjectDeleteMarker: true }],
        },
        ABORT_STALLED_UPLOADS,
      ],
    });
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
