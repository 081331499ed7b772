import {
  DataAwsIamPolicyDocument,
  type DataAwsIamPolicyDocumentStatement,
} from '@cdktf/provider-aws/lib/data-aws-iam-policy-document';
import { S3Bucket, type S3BucketConfig } from '@cdktf/provider-aws/lib/s3-bucket';
import {
  S3BucketLifecycleConfiguration,
  type S3BucketLifecycleConfigurationRule,
} from '@cdktf/provider-aws/lib/s3-bucket-lifecycle-configuration';
import { S3BucketOwnershipControls } from '@cdktf/provider-aws/lib/s3-bucket-ownership-controls';
import { S3BucketPolicy } from '@cdktf/provider-aws/lib/s3-bucket-policy';
import { S3BucketPublicAccessBlock } from '@cdktf/provider-aws/lib/s3-bucket-public-access-block';
import { S3BucketServerSideEncryptionConfigurationA as S3BucketServerSideEncryptionConfiguration } from '@cdktf/provider-aws/lib/s3-bucket-server-side-encryption-configuration';
import { S3BucketVersioningA as S3BucketVersioning } from '@cdktf/provider-aws/lib/s3-bucket-versioning';
import type { TerraformProvider } from 'cdktf';
import type { Construct } from 'constructs';
import { checkovSkip } from '../checkov';

export interface PrivateBucketProps {
  readonly bucket: Pick<S3BucketConfig, 'bucket' | 'bucketPrefix' | 'forceDestroy'>;
  /** A customer key, or S3-managed keys where the writer supports nothing else (ALB access logs). */
  readonly encryption: { readonly kmsKeyArn: string } | 'sse-s3';
  readonly lifecycle: S3BucketLifecycleConfigurationRule[];
  /** Checks that do not apply to this bucket, each with its reason. */
  readonly checkovSkips: Record<string, string>;
  /** Grants beside the TLS-only denial (a log-delivery service writing, for example). */
  readonly statements?: (bucket: S3Bucket) => DataAwsIamPolicyDocumentStatement[];
  readonly policyDocumentId?: string;
  readonly provider?: TerraformProvider;
}

/**
 * Every bucket of the platform is made the same way: public access blocked, owner-enforced
 * objects, versioned, encrypted by default, a lifecycle, and a policy that refuses plain HTTP.
 * Its parts are added to the caller's construct under fixed ids, so their addresses stay put.
 */
export function privateBucket(scope: Construct, props: PrivateBucketProps): S3Bucket {
  const bucket = new S3Bucket(scope, 'bucket', props.bucket);
  checkovSkip(bucket, props.checkovSkips);
  new S3BucketPublicAccessBlock(scope, 'public-access', {
    bucket: bucket.id,
    blockPublicAcls: true,
    blockPublicPolicy: true,
    ignorePublicAcls: true,
    restrictPublicBuckets: true,
  });
  new S3BucketOwnershipControls(scope, 'ownership', {
    bucket: bucket.id,
    rule: { objectOwnership: 'BucketOwnerEnforced' },
  });
  new S3BucketVersioning(scope, 'versioning', {
    bucket: bucket.id,
    versioningConfiguration: { status: 'Enabled' },
  });
  new S3BucketServerSideEncryptionConfiguration(scope, 'encryption', {
    bucket: bucket.id,
    rule: [
      props.encryption === 'sse-s3'
        ? { applyServerSideEncryptionByDefault: { sseAlgorithm: 'AES256' } }
        : {
            applyServerSideEncryptionByDefault: { sseAlgorithm: 'aws:kms', kmsMasterKeyId: props.encryption.kmsKeyArn },
            bucketKeyEnabled: true,
          },
    ],
  });
  new S3BucketLifecycleConfiguration(scope, 'lifecycle', { bucket: bucket.id, rule: props.lifecycle });
  const policy = new DataAwsIamPolicyDocument(scope, props.policyDocumentId ?? 'tls-only', {
    provider: props.provider,
    statement: [
      {
        sid: 'DenyPlainHttp',
        effect: 'Deny',
        principals: [{ type: '*', identifiers: ['*'] }],
        actions: ['s3:*'],
        resources: [bucket.arn, `${bucket.arn}/*`],
        condition: [{ test: 'Bool', variable: 'aws:SecureTransport', values: ['false'] }],
      },
      ...(props.statements?.(bucket) ?? []),
    ],
  });
  new S3BucketPolicy(scope, 'policy', { bucket: bucket.id, policy: policy.json });
  return bucket;
}

/** Multipart uploads that never completed cost storage and serve nobody. */
export const ABORT_STALLED_UPLOADS: S3BucketLifecycleConfigurationRule = {
  id: 'abort-stalled-uploads',
  status: 'Enabled',
  filter: [{ prefix: '' }],
  abortIncompleteMultipartUpload: [{ daysAfterInitiation: 7 }],
};
