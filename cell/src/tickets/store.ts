import {
  CreateBucketCommand,
  GetObjectCommand,
  HeadObjectCommand,
  NoSuchKey,
  NotFound,
  PutObjectCommand,
  S3Client,
} from '@aws-sdk/client-s3';
import { z } from 'zod';

/**
 * Where a cell keeps its ticket documents: the order PDFs and the event's signed void lists. One
 * bucket per cell (infra creates it); locally the s3rver that scripts/services starts.
 */
export const TicketStoreConfig = z.object({
  /** A deployed cell's stack sets its own bucket; the default is the local platform's. */
  TICKETS_BUCKET: z
    .string()
    .regex(/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/, 'an S3 bucket name')
    .default('onsale-tickets'),
  /** Lets cells share one bucket (locally, or in tests) without sharing keys. */
  TICKETS_PREFIX: z
    .string()
    .regex(/^([A-Za-z0-9._-]+\/)*$/, 'empty, or path segments each ending in /')
    .default(''),
  S3_REGION: z.string().default('us-east-1'),
  /** Set for a local S3-compatible server; absent means Amazon S3 with the task role. */
  S3_ENDPOINT: z.string().url().optional(),
  S3_ACCESS_KEY_ID: z.string().optional(),
  S3_SECRET_ACCESS_KEY: z.string().optional(),
});
export type TicketStoreConfig = z.infer<typeof TicketStoreConfig>;

/**
 * The bucket could not be reached or refused the call (network, credentials, S3 itself). The API
 * answers 503 with Retry-After; the ticket worker's step fails and is retried like any other.
 */
export class TicketStoreUnavailable extends Error {
  override name = 'TicketStoreUnavailable';
  constructor(cause: unknown) {
    super(`ticket store unavailable: ${cause instanceof Error ? cause.message : String(cause)}`, { cause });
  }
}

export interface TicketStore {
  put(key: string, body: Uint8Array | string, contentType: string): Promise<void>;
  get(key: string): Promise<Uint8Array | null>;
  exists(key: string): Promise<boolean>;
  keys: {
    orderPdf(eventId: string, orderId: string): string;
    voidList(eventId: string): string;
  };
  /** Local servers and tests only: a deployed cell's bucket comes from its stack. */
  ensureBucket(): Promise<void>;
}

export function createTicketStore(config: TicketStoreConfig): TicketStore {
  const client = new S3Client({
    region: config.S3_REGION,
    ...(config.S3_ENDPOINT ? { endpoint: config.S3_ENDPOINT, forcePathStyle: true } : {}),
    ...(config.S3_ACCESS_KEY_ID && config.S3_SECRET_ACCESS_KEY
      ? { credentials: { accessKeyId: config.S3_ACCESS_KEY_ID, secretAccessKey: config.S3_SECRET_ACCESS_KEY } }
      : {}),
  });
  const Bucket = config.TICKETS_BUCKET;
  const root = config.TICKETS_PREFIX;
  const exists = async (key: string) => {
    try {
      await client.send(new HeadObjectCommand({ Bucket, Key: key }));
      return true;
    } catch (err) {
      if (err instanceof NotFound || (err as { name?: string }).name === 'NotFound') return false;
      throw new TicketStoreUnavailable(err);
    }
  };
  const put = async (key: string, body: Uint8Array | string, contentType: string) => {
    try {
      await client.send(new PutObjectCommand({ Bucket, Key: key, Body: body, ContentType: contentType }));
    } catch (err) {
      throw new TicketStoreUnavailable(err);
    }
  };
  return {
    exists,
    put,
    async get(key) {
      try {
        const r = await client.send(new GetObjectCommand({ Bucket, Key: key }));
        return await r.Body!.transformToByteArray();
      } catch (err) {
        if (err instanceof NoSuchKey || (err as { name?: string }).name === 'NoSuchKey') return null;
        throw new TicketStoreUnavailable(err);
      }
    },
    keys: {
      orderPdf: (eventId, orderId) => `${root}events/${eventId}/orders/${orderId}/tickets.pdf`,
      voidList: (eventId) => `${root}events/${eventId}/voids.jwt`,
    },
    async ensureBucket() {
      try {
        await client.send(new CreateBucketCommand({ Bucket }));
      } catch (err) {
        const name = (err as { name?: string }).name;
        if (name !== 'BucketAlreadyOwnedByYou' && name !== 'BucketAlreadyExists') throw err;
      }
    },
  };
}
