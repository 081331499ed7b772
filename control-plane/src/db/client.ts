import { type DatabaseAuthConfig, pgConnection, tolerateConnectionLoss } from '@onsale/aws-auth';
import { drizzle, type NodePgDatabase } from 'drizzle-orm/node-postgres';
import pg from 'pg';
import * as schema from './schema';

export type Db = NodePgDatabase<typeof schema>;
export type Tx = Parameters<Parameters<Db['transaction']>[0]>[0];
/** A transaction handle or the database itself: helpers accept either so they compose. */
export type DbOrTx = Db | Tx;

export function createDb(
  url: string,
  max = 10,
  auth: DatabaseAuthConfig = { DATABASE_AUTH: 'password' },
): { db: Db; pool: pg.Pool } {
  const pool = new pg.Pool({ ...pgConnection(url, auth), max, application_name: 'control-plane' });
  // Found by the control-plane drill: the API exited at the database's loss and crash-looped until it returned.
  tolerateConnectionLoss(pool);
  return { db: drizzle(pool, { schema, casing: 'snake_case' }), pool };
}
