import { createPool, type DatabaseAuthConfig } from '@onsale/aws-auth';
import { drizzle, type NodePgDatabase } from 'drizzle-orm/node-postgres';
import type pg from 'pg';
import { BatchedTxClient } from './batched-tx';
import * as schema from './schema';

export type Db = NodePgDatabase<typeof schema>;
export type Tx = Parameters<Parameters<Db['transaction']>[0]>[0];

export interface Database {
  pool: pg.Pool;
  db: Db;
  close(): Promise<void>;
}

export function openDatabase(
  url: string,
  poolSize: number,
  applicationName: string,
  auth: DatabaseAuthConfig = { DATABASE_AUTH: 'password' },
  options: {
    /**
     * Keeps every connection once opened instead of closing it after 10 s idle. For the buyers' API: a
     * burst after a quiet spell (the onsale minute) otherwise opens its connections (TCP, TLS, SCRAM or an
     * IAM token) on its first requests again; in pnpm bench:holds that put those requests at 100-190 ms.
     */
    keepIdleConnections?: boolean;
    /** Milliseconds to wait for a connection before the query fails (pg-pool's connectionTimeoutMillis); none by default. */
    connectTimeoutMs?: number;
  } = {},
): Database {
  const pool = createPool(url, auth, {
    max: poolSize,
    ...(options.keepIdleConnections && { min: poolSize }),
    ...(options.connectTimeoutMs && { connectionTimeoutMillis: options.connectTimeoutMs }),
    application_name: applicationName,
    Client: BatchedTxClient,
  });
  const db = drizzle(pool, { schema });
  return { pool, db, close: () => pool.end() };
}
