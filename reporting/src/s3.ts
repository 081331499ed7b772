import { GetObjectCommand, ListObjectsV2Command, NoSuchKey, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import type { ReportingConfig } from './config';

export interface S3Settings {
  endpoint?: string;
  region: string;
  bucket: string;
  accessKeyId?: string;
  secretAccessKey?: string;
}

export interface ObjectStore {
  bucket: string;
  put(key: string, body: Uint8Array | string, contentType: string): Promise<void>;
  get(key: string): Promise<Uint8Array | null>;
  list(prefix: string): Promise<string[]>;
}

/** The reporting bucket. Without an endpoint it is Amazon S3 with the task role's credentials. */
export function createObjectStore(s: S3Settings): ObjectStore {
  const client = new S3Client({
    region: s.region,
    ...(s.endpoint ? { endpoint: s.endpoint, forcePathStyle: true } : {}),
    ...(s.accessKeyId && s.secretAccessKey
      ? { credentials: { accessKeyId: s.accessKeyId, secretAccessKey: s.secretAccessKey } }
      : {}),
  });
  return {
    bucket: s.bucket,
    async put(key, body, contentType) {
      await client.send(new PutObjectCommand({ Bucket: s.bucket, Key: key, Body: body, ContentType: contentType }));
    },
    async get(key) {
      try {
        const r = await client.send(new GetObjectCommand({ Bucket: s.bucket, Key: key }));
        return await r.Body!.transformToByteArray();
      } catch (err) {
        if (err instanceof NoSuchKey || (err as { name?: string }).name === 'NoSuchKey') return null;
        throw err;
      }
    },
    async list(prefix) {
      const keys: string[] = [];
      let token: string | undefined;
      do {
        const r = await client.send(
          new ListObjectsV2Command({ Bucket: s.bucket, Prefix: prefix, ContinuationToken: token }),
        );
        for (const o of r.Contents ?? []) if (o.Key) keys.push(o.Key);
        token = r.IsTruncated ? r.NextContinuationToken : undefined;
      } while (token);
      return keys;
    },
  };
}

const pad = (n: bigint) => n.toString().padStart(20, '0');

/** Where a batch's facts for one tenant, event and day land: Hive-style, for query engines. */
export function factObjectKey(
  root: string,
  p: { tenantId: string; eventId: string; date: string; source: string },
  b: { topic: string; partition: number; first: bigint; last: bigint },
): string {
  const seg = (v: string) => encodeURIComponent(v);
  return `${root}facts/tenant=${seg(p.tenantId)}/event=${seg(p.eventId)}/date=${p.date}/cell=${seg(p.source)}/${seg(b.topic)}-p${b.partition}-${pad(b.first)}-${pad(b.last)}.parquet`;
}

/** The batch plan, written before its objects, so a replay cuts the same batch again. */
export const batchPlanKey = (root: string, topic: string, partition: number, first: bigint) =>
  `${root}_batches/${encodeURIComponent(topic)}/p${partition}/${pad(first)}.json`;

/** The bucket a reporting process's configuration names. */
export function objectStoreFromConfig(config: ReportingConfig): ObjectStore {
  return createObjectStore({
    bucket: config.S3_BUCKET,
    region: config.S3_REGION,
    endpoint: config.S3_ENDPOINT,
    accessKeyId: config.S3_ACCESS_KEY_ID,
    secretAccessKey: config.S3_SECRET_ACCESS_KEY,
  });
}
